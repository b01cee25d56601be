import { readFileSync } from 'node:fs';
import { Client, Connection, type ConnectionLike, type ConnectionOptions } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type { Config } from './config';
import { ConfigError } from './config';
import { workflowCommandLog } from './workflow-command-log';
import { temporalClientInterceptors } from './tracing';
import { dataConverterOf, type PayloadKeyConfig } from './payload-codec';
import { codesOf, whenReachable, type Dependency } from './startup-wait';

export type TemporalConnectionConfig = Pick<Config, 'TEMPORAL_ADDRESS'> &
  Partial<
    Pick<
      Config,
      | 'TEMPORAL_TLS'
      | 'TEMPORAL_TLS_CERT_PATH'
      | 'TEMPORAL_TLS_KEY_PATH'
      | 'TEMPORAL_TLS_CA_PATH'
      | 'TEMPORAL_TLS_SERVER_NAME'
      | 'TEMPORAL_API_KEY'
    >
  >;

/**
 * How every process reaches Temporal (client, worker, setup command): address, TLS and API key
 * from the config. Files are read here, once, so a missing one fails at start with its variable.
 * The same shape suits the client's Connection and the worker's NativeConnection.
 */
export function temporalConnectionOptions(config: TemporalConnectionConfig): {
  address: string;
  apiKey?: string;
  tls?: ConnectionOptions['tls'];
} {
  const tlsWanted =
    config.TEMPORAL_TLS ||
    Boolean(
      config.TEMPORAL_TLS_CERT_PATH ||
      config.TEMPORAL_TLS_CA_PATH ||
      config.TEMPORAL_TLS_SERVER_NAME ||
      config.TEMPORAL_API_KEY,
    );
  if (!tlsWanted) return { address: config.TEMPORAL_ADDRESS };
  return {
    address: config.TEMPORAL_ADDRESS,
    apiKey: config.TEMPORAL_API_KEY,
    tls: {
      serverNameOverride: config.TEMPORAL_TLS_SERVER_NAME,
      serverRootCACertificate: config.TEMPORAL_TLS_CA_PATH
        ? readPem('TEMPORAL_TLS_CA_PATH', config.TEMPORAL_TLS_CA_PATH)
        : undefined,
      clientCertPair:
        config.TEMPORAL_TLS_CERT_PATH && config.TEMPORAL_TLS_KEY_PATH
          ? {
              crt: readPem('TEMPORAL_TLS_CERT_PATH', config.TEMPORAL_TLS_CERT_PATH),
              key: readPem('TEMPORAL_TLS_KEY_PATH', config.TEMPORAL_TLS_KEY_PATH),
            }
          : undefined,
    },
  };
}

function readPem(variable: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError(
      `invalid configuration:\n  ${variable}: cannot read ${path} (${(err as NodeJS.ErrnoException).code})`,
    );
  }
}

/** One client connection per process; Temporal calls carry their own deadlines. */
export async function connectClient(
  config: TemporalConnectionConfig & Pick<Config, 'TEMPORAL_NAMESPACE' | 'STARTUP_WAIT_SECONDS'> & PayloadKeyConfig,
): Promise<Client> {
  return clientOn(await connectTemporal(config), config);
}

/** A client connection, waited for up to STARTUP_WAIT_SECONDS when Temporal is not up yet. */
export function connectTemporal(
  config: TemporalConnectionConfig & Pick<Config, 'STARTUP_WAIT_SECONDS'>,
): Promise<Connection> {
  const options: ConnectionOptions = { ...temporalConnectionOptions(config), connectTimeout: '10s' };
  return whenReachable(
    temporalDependency(config, async () => {
      const connection = Connection.lazy(options);
      try {
        await connection.ensureConnected();
        return connection;
      } catch (err) {
        await connection.close(); // a failed try keeps no channel retrying in the background
        throw err;
      }
    }),
    config.STARTUP_WAIT_SECONDS,
  );
}

/**
 * Temporal as the start-up wait sees it (lib/runtime/startup-wait.ts): a rejected key or
 * certificate fails at once; anything else may be a server still starting, and is waited out.
 */
export function temporalDependency<T>(
  config: Pick<Config, 'TEMPORAL_ADDRESS'>,
  connect: () => Promise<T>,
): Dependency<T> {
  return {
    name: `Temporal at ${config.TEMPORAL_ADDRESS}`,
    reach: connect,
    notUpYet: (err) => !codesOf(err).some((code) => code === GRPC_UNAUTHENTICATED || code === GRPC_PERMISSION_DENIED),
  };
}

/**
 * A client on a connection the process already holds. On a worker's NativeConnection its starts
 * may ask for the workflow's first task to come straight back to that worker (`requestEagerStart`).
 */
export function clientOn(connection: ConnectionLike, config: Pick<Config, 'TEMPORAL_NAMESPACE'> & PayloadKeyConfig) {
  return new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    dataConverter: dataConverterOf(config),
    interceptors: { workflow: [...temporalClientInterceptors(), workflowCommandLog()] },
  });
}

/**
 * Registers the search attributes the workflows write (domain/search-attributes.ts). Without them
 * every subscription's workflow task would fail. This needs operator rights, so it is the setup
 * command's job (`npm run temporal:setup`), not the worker's: a worker also runs on Temporal Cloud,
 * where workers hold no such rights. An attribute that already exists is left alone.
 */
export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
  /** The keyword attributes to register, by name (domain/search-attributes.ts). */
  names: readonly string[],
): Promise<void> {
  const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  let missing = [...names];
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace });
    missing = missing.filter((name) => !(name in (existing.customAttributes ?? {})));
  } catch (err) {
    // The time-skipping test server has no list call, only add.
    if ((err as { code?: number }).code !== GRPC_UNIMPLEMENTED) throw err;
  }
  if (missing.length === 0) return;
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((name) => [name, KEYWORD])),
    });
  } catch (err) {
    // Another setup run registered them first.
    if ((err as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw err;
  }
}

/**
 * Registers the namespace when it does not exist: the full server creates none (the dev server and
 * Temporal Cloud do). Where it exists, nothing is asked, so a key without that right is enough.
 */
export async function ensureNamespace(connection: Connection, namespace: string): Promise<void> {
  try {
    await connection.workflowService.describeNamespace({ namespace });
    return;
  } catch (err) {
    if ((err as { code?: number }).code !== GRPC_NOT_FOUND) throw err;
  }
  try {
    // Closed workflows stay listed for 3 days; the service's own records outlive them in PostgreSQL.
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('3 days'),
    });
  } catch (err) {
    if ((err as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw err;
  }
}

const GRPC_NOT_FOUND = 5;
const GRPC_PERMISSION_DENIED = 7;
const GRPC_ALREADY_EXISTS = 6;
const GRPC_UNIMPLEMENTED = 12;
const GRPC_UNAUTHENTICATED = 16;

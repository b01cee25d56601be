import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Config } from './config';
import { SEARCH_ATTRIBUTE_TYPES } from '../domain/search-attributes';
import { workflowCommandLog } from './workflow-command-log';

/** One client connection per process; Temporal calls carry their own deadlines. */
export async function connectClient(config: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'>): Promise<Client> {
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS, connectTimeout: '10s' });
  return new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, interceptors: { workflow: [workflowCommandLog()] } });
}

/**
 * Registers the search attributes the workflows write (domain/search-attributes.ts). Without them
 * every subscription's workflow task would fail, so the worker makes sure at start; an attribute
 * that already exists is left alone.
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  let missing = Object.keys(SEARCH_ATTRIBUTE_TYPES);
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
    // Another worker registered them first.
    if ((err as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw err;
  }
}

const GRPC_ALREADY_EXISTS = 6;
const GRPC_UNIMPLEMENTED = 12;

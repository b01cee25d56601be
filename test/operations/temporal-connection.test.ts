import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { ConfigError, loadConfig } from '../../lib/runtime/config';
import { temporalConnectionOptions } from '../../lib/runtime/temporal';

/** TLS and API-key options for the Temporal connection (issue 14), one builder for every process. */
describe('Temporal connection options', () => {
  const dir = mkdtempSync(join(tmpdir(), 'temporal-tls-'));
  const keyPem = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const files = { cert: join(dir, 'client.pem'), key: join(dir, 'client.key'), ca: join(dir, 'ca.pem') };
  writeFileSync(files.cert, '-----BEGIN CERTIFICATE-----\nclient\n-----END CERTIFICATE-----\n');
  writeFileSync(files.key, keyPem);
  writeFileSync(files.ca, '-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n');
  const config = (env: Record<string, string>) =>
    loadConfig({
      DATABASE_URL: 'postgres://u@127.0.0.1/db',
      NODE_ENV: 'development',
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      ...env,
    });

  it('connects in plain text when nothing asks for TLS', () => {
    expect(temporalConnectionOptions(config({}))).toEqual({ address: 'ns.acct.tmprl.cloud:7233' });
  });

  it('reads the client certificate pair, the CA and the server name for mTLS', () => {
    const options = temporalConnectionOptions(
      config({
        TEMPORAL_TLS_CERT_PATH: files.cert,
        TEMPORAL_TLS_KEY_PATH: files.key,
        TEMPORAL_TLS_CA_PATH: files.ca,
        TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      }),
    );
    expect(options.tls).toEqual({
      serverNameOverride: 'temporal.internal',
      serverRootCACertificate: Buffer.from('-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n'),
      clientCertPair: {
        crt: Buffer.from('-----BEGIN CERTIFICATE-----\nclient\n-----END CERTIFICATE-----\n'),
        key: Buffer.from(keyPem),
      },
    });
  });

  it('turns TLS on with an API key (Temporal Cloud)', () => {
    const options = temporalConnectionOptions(config({ TEMPORAL_API_KEY: 'tcld-key' }));
    expect(options.apiKey).toBe('tcld-key');
    expect(options.tls).toBeDefined();
  });

  it('fails at start naming the variable whose file cannot be read, or a certificate without its key', () => {
    expect(() => temporalConnectionOptions(config({ TEMPORAL_TLS_CA_PATH: join(dir, 'missing.pem') }))).toThrow(
      ConfigError,
    );
    expect(() => temporalConnectionOptions(config({ TEMPORAL_TLS_CA_PATH: join(dir, 'missing.pem') }))).toThrow(
      /TEMPORAL_TLS_CA_PATH/,
    );
    expect(() => config({ TEMPORAL_TLS_CERT_PATH: files.cert })).toThrow(
      /TEMPORAL_TLS_CERT_PATH, TEMPORAL_TLS_KEY_PATH/,
    );
  });

  it('really speaks TLS: a plain-text server refuses the handshake', async () => {
    const options = temporalConnectionOptions(
      config({ TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS!, TEMPORAL_TLS: 'true' }),
    );
    await expect(Connection.connect({ ...options, connectTimeout: '3s' })).rejects.toThrow();
    // The same server, without TLS, answers.
    const plain = await Connection.connect({
      ...temporalConnectionOptions(config({ TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS! })),
      connectTimeout: '10s',
    });
    await plain.close();
  });

  it('gives workers a shutdown grace longer than a 30 s webhook attempt', () => {
    expect(config({}).WORKER_SHUTDOWN_GRACE_SECONDS).toBeGreaterThan(30);
    expect(() => config({ WORKER_SHUTDOWN_GRACE_SECONDS: '30' })).toThrow(/WORKER_SHUTDOWN_GRACE_SECONDS/);
  });
});

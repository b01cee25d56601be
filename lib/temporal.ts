import { Client, Connection } from '@temporalio/client';
import type { Config } from './config';

/** One client connection per process; Temporal calls carry their own deadlines. */
export async function connectClient(config: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'>): Promise<Client> {
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS, connectTimeout: '10s' });
  return new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
}

import type { Sink } from './sink';

const round = (n: number) => Math.round(n * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Deliveries per second sustained: publishers keep the queue from ever running dry
 * (up to `maxBacklog` deliveries published and not yet received), so the engine, not the
 * offered load, sets the rate; it is counted over `seconds` after a warm-up, as deliveries
 * recorded a success in PostgreSQL (durable, not merely received). Then publishing stops, the
 * backlog drains, and every delivery must have been received exactly once and recorded.
 */
export async function sustained(opts: {
  sink: Sink;
  /** The organisation whose endpoints the phase publishes to: its receipts are the phase's. */
  orgId: string;
  fanout: number;
  seconds: number;
  warmUpSeconds: number;
  maxBacklog: number;
  publishers: number;
  /** Publishes one event (to `fanout` endpoints). */
  publish: () => Promise<void>;
  /** Deliveries of this phase recorded a success at their first attempt. */
  recorded: () => Promise<number>;
}) {
  let published = 0;
  let received = 0;
  let stopping = false;
  let minBacklog = Infinity;
  let measuring = false;
  const sampler = (async () => {
    while (!stopping) {
      received = (await opts.sink.receipts([opts.orgId])).received;
      if (measuring) minBacklog = Math.min(minBacklog, published - received);
      await sleep(100);
    }
  })();
  const publishers = Array.from({ length: opts.publishers }, async () => {
    while (!stopping) {
      if (published - received >= opts.maxBacklog) {
        await sleep(5);
        continue;
      }
      published += opts.fanout;
      await opts.publish();
    }
  });
  await sleep(opts.warmUpSeconds * 1000);
  measuring = true;
  const t0 = Date.now();
  const [recorded0, published0] = [await opts.recorded(), published];
  await sleep(opts.seconds * 1000);
  const [recorded1, published1] = [await opts.recorded(), published];
  const window = (Date.now() - t0) / 1000;
  measuring = false;
  stopping = true;
  await Promise.all([...publishers, sampler]);

  const drained = await opts.sink.waitForReceipts([opts.orgId], published, 600_000);
  let recorded = await opts.recorded();
  for (const deadline = Date.now() + 120_000; recorded < published && Date.now() < deadline; await sleep(200))
    recorded = await opts.recorded();
  return {
    endpoints: opts.fanout,
    seconds: round(window),
    deliveries_per_s: round((recorded1 - recorded0) / window),
    offered_per_s: round((published1 - published0) / window),
    min_backlog_in_window: minBacklog,
    published,
    received: drained.received,
    recorded_success: recorded,
    duplicates: drained.duplicates,
  };
}

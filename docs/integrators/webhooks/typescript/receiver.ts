// A runnable receiver: WEBHOOK_SECRET=whsec_... SCHEME=spec|standard PORT=8080 node --import tsx receiver.ts
// It verifies every request over the raw bytes, answers 401 to a bad signature or a stale
// timestamp, and processes each event once: a repeat (a retry after a lost answer, or a replay)
// is acknowledged with 200 and not processed again. Keep the "seen" ids in your database. It prints
// {"port": N} once it listens, then one line per verified delivery: its outcome, event type and event id.
import { createServer } from 'node:http';
import { verifyServiceSignature, verifyStandardWebhook } from './verify';

const secret = process.env.WEBHOOK_SECRET ?? '';
const scheme = process.env.SCHEME === 'standard' ? 'standard' : 'spec';
const seen = new Set<string>();

/** The verified body's event type and id (spec §6.3), to print; nothing when it is not such an envelope. */
function eventOf(body: Buffer): { event_type?: unknown; event_id?: unknown } {
  try {
    const { event_type, event_id } = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    return { event_type, event_id };
  } catch {
    return {};
  }
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    let outcome: string;
    let dedupeKey: string | undefined;
    if (scheme === 'spec') {
      outcome = verifyServiceSignature(secret, body, header('x-service-signature')) ? 'ok' : 'bad_signature';
      if (outcome === 'ok') dedupeKey = (JSON.parse(body.toString('utf8')) as { event_id: string }).event_id; // spec §6.1
    } else {
      outcome = verifyStandardWebhook(secret, body, {
        id: header('webhook-id'),
        timestamp: header('webhook-timestamp'),
        signature: header('webhook-signature'),
      });
      dedupeKey = header('webhook-id');
    }
    if (outcome === 'ok' && dedupeKey !== undefined) {
      outcome = seen.has(dedupeKey) ? 'duplicate' : 'accepted';
      seen.add(dedupeKey); // process the event here, once
    }
    const status = outcome === 'accepted' || outcome === 'duplicate' ? 200 : 401;
    if (status === 200) console.log(JSON.stringify({ outcome, ...eventOf(body) })); // what arrived, for you to watch
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ outcome }));
  });
});

server.listen(Number(process.env.PORT ?? 8080), '127.0.0.1', () => {
  const address = server.address();
  console.log(JSON.stringify({ port: typeof address === 'object' && address ? address.port : null }));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));

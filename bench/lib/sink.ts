import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { stopProcess } from '../../scripts/lib/temporal-dev-server';

/**
 * The consumer, in a process of its own so its CPU is not the publisher's. `/h/<hook>` verifies
 * the `sha256=` HMAC over the raw body and answers 200 (`/svix/<hook>`: Svix's `svix-signature`, for the
 * peer in bench/lib/svix-peer.ts); `/f/<hook>` answers 500; `/hang/<hook>`
 * takes the request and never answers; `/slow/<hook>?ms=N` is `/h/` answering after N ms. Each delivery id's requests are counted (a second one is a
 * duplicate), in all and by the organisation its hook was registered for, and its first arrival is
 * kept until the bench reads it. A phase counts its own organisations' receipts, so a straggler of
 * an earlier phase never counts toward a later one's.
 */
const SINK = `
const http = require('node:http'), { createHmac, timingSafeEqual } = require('node:crypto');
const secrets = new Map(), owners = new Map(), seen = new Map(), byOrg = new Map(); let arrivals = [];
const stats = { received: 0, duplicates: 0, bad: 0, failed: 0, hanging: 0 };
const receiptsOf = (org) => { let r = byOrg.get(org); if (!r) byOrg.set(org, (r = { received: 0, duplicates: 0 })); return r; };
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://sink'), [, area, name] = url.pathname.split('/');
  if (area === 'hang') { stats.hanging++; req.resume(); return; }
  const chunks = []; req.on('data', (c) => chunks.push(c)); req.on('end', () => {
    const body = Buffer.concat(chunks);
    if (area === 'secret') { secrets.set(name, body.toString()); owners.set(name, url.searchParams.get('org') || ''); return res.end('ok'); }
    if (area === 'stats') return res.end(JSON.stringify(stats));
    if (area === 'receipts') {
      const sum = { received: 0, duplicates: 0 };
      for (const org of new Set(url.searchParams.getAll('org'))) { const r = receiptsOf(org); sum.received += r.received; sum.duplicates += r.duplicates; }
      return res.end(JSON.stringify(sum));
    }
    if (area === 'arrivals') { const a = arrivals; arrivals = []; return res.end(JSON.stringify(a)); }
    if (area === 'f') { stats.failed++; res.statusCode = 500; return res.end(); }
    const at = Date.now(), secret = secrets.get(name) || '';
    let delivery, event;
    if (area === 'svix') {
      // Svix's scheme: v1,<base64 HMAC of id.timestamp.body> under the whsec_ secret's bytes; its id is the message's.
      delivery = event = String(req.headers['svix-id'] || '');
      const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
      const want = 'v1,' + createHmac('sha256', key).update(delivery + '.' + String(req.headers['svix-timestamp'] || '') + '.').update(body).digest('base64');
      if (!String(req.headers['svix-signature'] || '').split(' ').includes(want)) { stats.bad++; res.statusCode = 401; return res.end(); }
    } else {
      const want = Buffer.from('sha256=' + createHmac('sha256', secret).update(body).digest('hex'));
      const got = Buffer.from(String(req.headers['x-service-signature'] || ''));
      if (got.length !== want.length || !timingSafeEqual(got, want)) { stats.bad++; res.statusCode = 401; return res.end(); }
      delivery = String(req.headers['x-service-delivery-id']); event = String(req.headers['x-service-event-id']);
    }
    const mine = receiptsOf(owners.get(name) || '');
    if (seen.has(delivery)) { stats.duplicates++; mine.duplicates++; }
    else { seen.set(delivery, 1); stats.received++; mine.received++; arrivals.push([delivery, event, at]); }
    if (area === 'slow') setTimeout(() => res.end('ok'), Number(url.searchParams.get('ms')));
    else res.end('ok');
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
process.on('SIGTERM', () => { server.close(() => process.exit(0)); server.closeAllConnections(); });
`;

/** What arrived for some organisations' endpoints. */
export interface Receipts {
  /** Deliveries received at least once, signature verified. */
  received: number;
  /** Requests for a delivery already received. */
  duplicates: number;
}

/** What arrived in all, and what the sink refused or held. */
export interface SinkStats extends Receipts {
  bad: number;
  failed: number;
  hanging: number;
}

/** A delivery's first arrival: its id, its event's id, and when (ms since epoch). */
export type Arrival = [deliveryId: string, eventId: string, at: number];

/** When the last of `arrivals` came (a loop: a run's arrivals outnumber what a spread into Math.max takes). */
export const lastArrivalAt = (arrivals: readonly Arrival[]): number =>
  arrivals.reduce((last, [, , at]) => (at > last ? at : last), -Infinity);

export type Sink = Awaited<ReturnType<typeof startSink>>;

export async function startSink() {
  const child: ChildProcess = spawn(process.execPath, ['-e', SINK], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((r) => createInterface({ input: child.stdout! }).once('line', r));
  const url = `http://127.0.0.1:${port}`;
  const get = async <T>(path: string): Promise<T> =>
    (await fetch(`${url}${path}`, { signal: AbortSignal.timeout(30_000) })).json() as Promise<T>;
  const receipts = (orgIds: readonly string[]) =>
    get<Receipts>(`/receipts?${orgIds.map((id) => `org=${encodeURIComponent(id)}`).join('&')}`);
  return {
    url,
    /** Tells the sink the secret of `/<area>/<hook>`, and the organisation whose receipts it counts toward. */
    register: (hook: string, secret: string, orgId = '') =>
      fetch(`${url}/secret/${hook}?org=${encodeURIComponent(orgId)}`, {
        method: 'POST',
        body: secret,
        signal: AbortSignal.timeout(30_000),
      }).then(() => undefined),
    stats: () => get<SinkStats>('/stats'),
    /** What arrived for the endpoints of these organisations. */
    receipts,
    /** First arrivals since the previous call. */
    arrivals: () => get<Arrival[]>('/arrivals'),
    /** Waits until the organisations' `received` reaches `target`, or the timeout; answers their receipts then. */
    async waitForReceipts(orgIds: readonly string[], target: number, timeoutMs: number): Promise<Receipts> {
      const deadline = Date.now() + timeoutMs;
      let r = await receipts(orgIds);
      while (r.received < target && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        r = await receipts(orgIds);
      }
      return r;
    },
    stop: () => stopProcess(child),
  };
}

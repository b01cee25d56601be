import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { stopProcess } from '../../scripts/lib/temporal-dev-server';

// The consumer: verifies `sha256=` HMAC over the raw body, answers 200 (500 under /f/), notes each event's first arrival.
const SINK = `
const http = require('node:http'), { createHmac, timingSafeEqual } = require('node:crypto');
const secrets = new Map(); let count = 0, bad = 0, failed = 0; const first = new Map();
const server = http.createServer((req, res) => {
  const chunks = []; req.on('data', (c) => chunks.push(c)); req.on('end', () => {
    const body = Buffer.concat(chunks); const [, area, name] = req.url.split('/');
    if (area === 'secret') { secrets.set(name, body.toString()); return res.end('ok'); }
    if (area === 'stats') { const f = Object.fromEntries(first); first.clear(); return res.end(JSON.stringify({ count, bad, failed, first: f })); }
    if (area === 'f') { failed++; res.statusCode = 500; return res.end(); }
    const now = Date.now(); const secret = secrets.get(name) || '';
    const want = Buffer.from('sha256=' + createHmac('sha256', secret).update(body).digest('hex'));
    const got = Buffer.from(String(req.headers['x-service-signature'] || ''));
    if (got.length !== want.length || !timingSafeEqual(got, want)) { bad++; res.statusCode = 401; return res.end(); }
    count++; const id = req.headers['x-service-event-id']; if (!first.has(id)) first.set(id, now);
    res.end('ok');
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

export interface SinkStats {
  count: number;
  bad: number;
  failed: number;
  /** Each event's first arrival (ms since epoch) since the previous call. */
  first: Record<string, number>;
}

/** The benchmark's consumer, as a process of its own so its CPU is not the publisher's. */
export async function startVerifyingSink() {
  const child: ChildProcess = spawn(process.execPath, ['-e', SINK], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = `http://127.0.0.1:${await new Promise<string>((r) => createInterface({ input: child.stdout! }).once('line', r))}`;
  return {
    url,
    /** Tells the sink the secret of `/h/<hook>` (and `/f/<hook>`). */
    register: (hook: string, secret: string) =>
      fetch(`${url}/secret/${hook}`, { method: 'POST', body: secret }).then(() => undefined),
    stats: async (): Promise<SinkStats> => (await fetch(`${url}/stats`)).json() as Promise<SinkStats>,
    stop: () => stopProcess(child),
  };
}

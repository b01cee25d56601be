// A webhook consumer in its own process, as a customer would run one: it verifies every delivery
// with @octokit/webhooks-methods (an independent, maintained GitHub-style `sha256=` verifier, not
// our signing code) over the raw body, answers 401 when the signature does not verify (spec §6.4),
// and otherwise answers with the statuses the test planned for that hook. The test reads what it
// received over a small control API.
import { createServer } from 'node:http';
import { verify } from '@octokit/webhooks-methods';

const hooks = new Map(); // name -> { secret, responses: number[], defaultStatus, delayMs }
const received = new Map(); // name -> record[]
const open = new Map(); // name -> requests being answered now

const json = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

async function rawBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://receiver');
  const [, area, name] = url.pathname.split('/');
  try {
    if (area === 'hooks' && req.method === 'POST') {
      // How many of this hook's requests are open at once (an endpoint's concurrency, as it sees it).
      open.set(name, (open.get(name) ?? 0) + 1);
      res.once('close', () => open.set(name, open.get(name) - 1));
      const body = await rawBody(req);
      const hook = hooks.get(name) ?? { secret: null, responses: [], defaultStatus: 200, delayMs: 0, refuse: [] };
      const signature = req.headers['x-service-signature'] ?? '';
      const verified = Boolean(hook.secret && body && signature) && (await verify(hook.secret, body, signature));
      // A planned answer is a status, or { status, headers } (a Retry-After, for instance).
      // `refuse`: a body containing one of these strings is answered 500, whatever its turn.
      const refused = verified && hook.refuse.some((r) => body.includes(r));
      const planned = !verified
        ? 401
        : refused
          ? 500
          : hook.responses.length
            ? hook.responses.shift()
            : hook.defaultStatus;
      const status = typeof planned === 'number' ? planned : planned.status;
      const extra = typeof planned === 'number' ? {} : (planned.headers ?? {});
      const list = received.get(name) ?? [];
      list.push({ at: Date.now(), headers: req.headers, body, verified, status, concurrent: open.get(name) });
      received.set(name, list);
      if (hook.delayMs) await new Promise((r) => setTimeout(r, hook.delayMs));
      for (const [k, v] of Object.entries(extra)) res.setHeader(k, v);
      return json(res, status, { received: verified });
    }
    if (area === '_control' && req.method === 'PUT') {
      const plan = JSON.parse(await rawBody(req));
      hooks.set(name, {
        secret: plan.secret,
        responses: plan.responses ?? [],
        defaultStatus: plan.defaultStatus ?? 200,
        delayMs: plan.delayMs ?? 0,
        refuse: plan.refuse ?? [],
      });
      return json(res, 200, { ok: true });
    }
    if (area === '_control' && req.method === 'GET') return json(res, 200, received.get(name) ?? []);
    json(res, 404, {});
  } catch (err) {
    json(res, 500, { error: String(err) });
  }
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections(); // hooks planned to hang hold theirs
});

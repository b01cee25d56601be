import { subscriptionSettled } from '../support/settled';
import { startService, type TestService } from '../support/service';
import {
  atLimit,
  BIDI,
  bodySchema,
  HEADER_HOSTILE,
  ILL_FORMED,
  isFreeText,
  isShownText,
  overLong,
  skeleton,
  stringFields,
  URL_HOSTILE,
  urlAtLimit,
  withValue,
  writeOperations,
  type JsonSchema,
  type Operation,
  type StringField,
} from './support/hostile-corpus';
import { hostileWorld, PROVIDER_SECRET, type HostileWorld } from './support/hostile-world';
import { rawRequest } from './support/raw-request';

/**
 * Every write operation the served document lists, every string it reads (body, query, path and
 * the headers it reads), against a corpus of hostile strings: lone surrogates, NUL, a pair cut in
 * half, one character too many, exactly the limit in 4-byte characters, bidi controls
 * (docs/decisions/0360-well-formed-text-at-the-door.md, 0361, 0362). A route added to the API is
 * walked without a new test. No answer may be a 5xx or come later than ANSWER_BOUND_MS (the
 * command deadline is 60 s: a command stuck on a write it could never make answers only then); a
 * refused string is refused 422 naming where it was; and afterwards every subscription still
 * answers, its workflow idle, and the offerings' capacity is what their live subscriptions hold.
 */
const ANSWER_BOUND_MS = 10_000;
/** Operations called at once; each operation's own requests go one after another. */
const PARALLEL = 4;

interface Answer {
  status: number;
  body: any;
  ms: number;
}
type Issue = { in: string; path: string; message: string };

describe.each(['A', 'B'] as const)('hostile strings on every write operation, Set %s', (set) => {
  let svc: TestService;
  let ops: Operation[];
  let world: HostileWorld;
  const problems: string[] = [];

  beforeAll(async () => {
    svc = await startService({
      set,
      env: {
        WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
        IDENTITY_PROVIDER_WEBHOOK_SECRET: PROVIDER_SECRET,
        // Set A's refund fixture settles its collection by hand (test/payments/refunds.test.ts).
        SANDBOX_AUTO_SETTLE: 'false',
      },
    });
    const doc = (await (await fetch(`${svc.baseUrl}/openapi.json`)).json()) as JsonSchema;
    ops = writeOperations(doc);
    world = await hostileWorld(svc, doc as { paths: Record<string, unknown> });
  }, 180_000);
  afterAll(() => svc?.stop());
  beforeEach(() => problems.splice(0));

  const label = (o: Operation, what: string) => `${o.method} ${o.path}: ${what}`;

  async function pathOf(o: Operation, encoded: Record<string, string> = {}, query = ''): Promise<string> {
    let path = o.path;
    for (const [, name] of o.path.matchAll(/\{(\w+)\}/g))
      path = path.replace(`{${name}}`, encoded[name!] ?? encodeURIComponent(await world.pathValue(o, name!)));
    return path + query;
  }

  /** One request as the operation's caller sends it; a body only where the method carries one. */
  async function send(o: Operation, opts: { encoded?: Record<string, string>; query?: string; body?: unknown }) {
    const raw = o.method === 'DELETE' ? '' : JSON.stringify(opts.body ?? {});
    const headers = Object.fromEntries(world.credentials(o, raw));
    const started = Date.now();
    const res = await fetch(svc.baseUrl + (await pathOf(o, opts.encoded, opts.query)), {
      method: o.method,
      headers: raw ? { ...headers, 'content-type': 'application/json' } : headers,
      body: raw || undefined,
      signal: AbortSignal.timeout(90_000),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // Kept as text: a refusal outside the envelope shows as what it was.
    }
    return { status: res.status, body, ms: Date.now() - started } as Answer;
  }

  const issues = (res: Answer): Issue[] => (Array.isArray(res.body?.error?.details) ? res.body.error.details : []);
  const names = (i: Issue, where: string, path: string) =>
    i.in === where && i.path.toLowerCase() === path.toLowerCase();

  /** Records what is wrong with an answer: a 5xx, an answer past the bound, a refusal that is not there. */
  function judge(what: string, res: Answer, expected: { refused?: [string, string][]; lengthOk?: [string, string][] }) {
    if (res.status >= 500 || res.status === 0) problems.push(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
    if (res.ms >= ANSWER_BOUND_MS) problems.push(`${what}: answered after ${res.ms} ms`);
    for (const [where, path] of expected.refused ?? [])
      if (res.status !== 422 || !issues(res).some((i) => names(i, where, path)))
        problems.push(`${what}: ${where} ${path} not refused 422 by name (${res.status} ${JSON.stringify(res.body)})`);
    for (const [where, path] of expected.lengthOk ?? []) {
      const refused = issues(res).find((i) => names(i, where, path) && /too (big|small)/i.test(i.message));
      if (refused) problems.push(`${what}: ${where} ${path} refused for its length: ${refused.message}`);
    }
  }

  async function eachOperation(run: (o: Operation) => Promise<void>): Promise<void> {
    const queue = [...ops];
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        for (let o = queue.shift(); o; o = queue.shift()) await run(o);
      }),
    );
  }

  const base = (o: Operation) => {
    const schema = bodySchema(o.op);
    return schema ? skeleton(schema, world.named) : {};
  };

  it('finds the write operations of the set in the document', () => {
    const listed = ops.map((o) => `${o.method} ${o.path}`);
    const endpoints = set === 'A' ? '/notifications/webhook-endpoints' : '/notifications/webhooks';
    expect(listed).toEqual(
      expect.arrayContaining([
        'POST /issuance/offerings/{offering_id}/subscriptions',
        'POST /issuance/subscriptions/{subscription_id}/refund',
        'POST /identity/auth/exchange',
        `POST ${endpoints}`,
      ]),
    );
    expect(ops.length).toBeGreaterThan(40);
  });

  it('refuses every string the database could never store, in a body, query or path, at once and by name', async () => {
    await eachOperation(async (o) => {
      const fields = stringFields(o.op);
      const inBody = fields.filter((f) => f.in === 'body');
      // A DELETE carries no body (the body parser reads POST, PUT and PATCH).
      for (const [what, value] of o.method === 'DELETE' ? [] : ILL_FORMED) {
        // Every string of the body at once (every branch's: the walk runs before the schema), and a key: each is named.
        const body = inBody.reduce<Record<string, unknown>>(
          (b, f) => withValue(b, { ...f, branch: undefined }, value, world.named),
          {},
        );
        body[`key ${value}`] = 1;
        const res = await send(o, { body, query: '' });
        judge(label(o, `${what} in the body`), res, { refused: inBody.map((f) => ['body', f.path]) });
        if (!issues(res).some((i) => i.in === 'body' && i.message.startsWith('a key')))
          problems.push(label(o, `${what} in a key: not refused as a key (${JSON.stringify(res.body)})`));
      }
      for (const f of fields.filter((x) => x.in !== 'body'))
        for (const [what, encoded, refused] of URL_HOSTILE) {
          const res =
            f.in === 'params'
              ? await send(o, { encoded: { [f.path]: encoded } })
              : await send(o, { query: `?${f.path}=${encoded}` });
          judge(label(o, `${what} in ${f.in} ${f.path}`), res, { refused: refused ? [[f.in, f.path]] : [] });
        }
      // A query no route reads is walked too.
      judge(label(o, 'NUL in an unread query'), await send(o, { query: '?hostile=%00' }), {
        refused: [['query', 'hostile']],
      });
    });
    expect(problems).toEqual([]);
  }, 300_000);

  it('refuses one character too many (counted in characters) and bidi controls in text shown to others, by name', async () => {
    await eachOperation(async (o) => {
      for (const f of stringFields(o.op)) {
        const hostile: [string, string][] = [];
        if (f.schema.maxLength) hostile.push(['one character too many', overLong(f.schema.maxLength)]);
        if (isShownText(f.schema)) hostile.push(...BIDI);
        for (const [what, value] of hostile) {
          const res =
            f.in === 'body'
              ? await send(o, { body: withValue(base(o), f, value, world.named) })
              : await send(
                  o,
                  f.in === 'params'
                    ? { encoded: { [f.path]: encodeURIComponent(value) } }
                    : {
                        query: `?${f.path}=${encodeURIComponent(value)}`,
                      },
                );
          judge(label(o, `${what} in ${f.in} ${f.path}`), res, { refused: [[f.in, f.path]] });
        }
        // Bidi controls elsewhere are the field's own business (an id, a token): never a 5xx.
        if (f.in === 'body' && isFreeText(f.schema) && !isShownText(f.schema))
          judge(
            label(o, `bidi in ${f.path}`),
            await send(o, { body: withValue(base(o), f, BIDI[0]![1], world.named) }),
            {},
          );
      }
    });
    expect(problems).toEqual([]);
  }, 300_000);

  it('answers every header an operation reads, whatever its bytes, in the envelope: 422 by name for a control character', async () => {
    await eachOperation(async (o) => {
      const path = await pathOf(o, {}, '?hostile=%00'); // refused in validation, after every header was read
      const raw = o.method === 'DELETE' ? undefined : '{}';
      const credentials = world.credentials(o, raw ?? '');
      const documented = ((o.op.parameters ?? []) as JsonSchema[]).filter((p) => p.in === 'header').map((p) => p.name);
      const read = new Set([...documented, 'Authorization', 'X-Request-Id', ...credentials.map(([n]) => n)]);
      for (const header of read)
        for (const [what, bytes, refused] of HEADER_HOSTILE) {
          const headers: [string, string | Buffer][] = [
            ...credentials.filter(([n]) => n.toLowerCase() !== header.toLowerCase()),
            [header, bytes],
          ];
          const res = await rawRequest(svc.baseUrl, { method: o.method, path, headers, body: raw });
          const what_ = label(o, `${what} in the header ${header}`);
          judge(what_, res, { refused: refused ? [['header', header]] : [] });
          if (res.status < 400 || res.body?.success !== false)
            problems.push(`${what_}: not refused in the envelope (${res.status} ${JSON.stringify(res.body)})`);
        }
    });
    expect(problems).toEqual([]);
  }, 300_000);

  it('takes text of exactly each stated limit, 4-byte characters and a pair across the audit cut included, and stores it', async () => {
    const stored = new Set<string>();
    await eachOperation(async (o) => {
      const free = stringFields(o.op).filter(
        (f) =>
          f.in === 'body' &&
          f.schema.maxLength &&
          (isFreeText(f.schema) || f.schema.format === 'uri') &&
          // A list the service checks (event types) keeps the value the world gives it.
          world.named(f.path.split('.')[0]!, f.schema) === undefined,
      );
      // One request per oneOf branch, every field of it at its limit: a command runs once.
      const byBranch = new Map<string, StringField[]>();
      for (const f of free) {
        const key = JSON.stringify(f.branch ?? null);
        byBranch.set(key, [...(byBranch.get(key) ?? []), f]);
      }
      for (const group of byBranch.values()) {
        const body = group.reduce((b, f) => withValue(b, f, valueAtLimit(f.schema), world.named), base(o));
        const res = await send(o, { body });
        judge(label(o, `${group.map((f) => f.path).join(', ')} at their limits`), res, {
          lengthOk: group.map((f) => ['body', f.path]),
        });
        if (res.status < 300)
          stored.add(`${o.method} ${o.path.replace(/^\/notifications\/webhook(-endpoint)?s/, '{endpoints}')}`);
      }
    });
    expect(problems).toEqual([]);
    // Where the world makes the command possible, the text went all the way: projection, events, audit.
    expect([...stored]).toEqual(
      expect.arrayContaining([
        'POST /issuance/offerings',
        'POST /issuance/offerings/{offering_id}/subscriptions',
        'POST /issuance/subscriptions/{subscription_id}/sign-agreement',
        'POST /issuance/subscriptions/{subscription_id}/provide-info',
        'POST /issuance/subscriptions/{subscription_id}/reject',
        'POST /issuance/subscriptions/{subscription_id}/request-info',
        'POST /issuance/subscriptions/{subscription_id}/void',
        'POST /issuance/subscriptions/{subscription_id}/refund',
        'PATCH {endpoints}/{id}',
        'POST /identity/api-keys',
        'POST /identity/kyc/{id}/decisions',
        'POST /identity/accreditations/{id}/decisions',
        'POST /identity/users/{user_id}/legal-hold',
      ]),
    );
  }, 300_000);

  it('leaves nothing hanging: every subscription answers, its workflow idle, and each offering commits what its live subscriptions hold', async () => {
    const db = svc.orm.em.getConnection();
    const projected = await db.execute<{ id: string }[]>('select id from subscriptions where org_id = ?', [world.org]);
    for (const id of new Set([...world.subscriptions, ...projected.map((r) => r.id)])) {
      const started = Date.now();
      const res = await world.api.get(`/issuance/subscriptions/${id}`, world.staff.token);
      judge(`GET subscription ${id}`, { ...res, ms: Date.now() - started }, {});
      if (res.status !== 200) problems.push(`GET subscription ${id}: ${res.status}`);
      await subscriptionSettled(svc, id, ANSWER_BOUND_MS);
    }
    for (const offeringId of [world.capped.offeringId, world.offering.offeringId]) {
      const read = await world.api.get(`/issuance/offerings/${offeringId}`, world.staff.token);
      const [live] = await db.execute<{ held: string }[]>(
        `select coalesce(sum((state->>'totalAmount')::numeric), 0)::numeric(39,2)::text as held
           from subscriptions where offering_id = ? and status not in ('rejected', 'cancelled', 'voided')`,
        [offeringId],
      );
      expect({ offering: offeringId, committed: read.body.data.committed_amount }).toEqual({
        offering: offeringId,
        committed: live!.held,
      });
    }
    // And the next create and cancel answer as ever.
    const created = await world.api.post(
      `/issuance/offerings/${world.capped.offeringId}/subscriptions`,
      world.investor.token,
      { securityClassId: world.capped.securityClassId, unitsSubscribed: 1 },
    );
    expect(created.status).toBe(201);
    expect(
      (await world.api.delete(`/issuance/subscriptions/${created.body.data.id}`, world.investor.token)).status,
    ).toBe(204);
    expect(problems).toEqual([]);
  }, 300_000);
});

/** The at-limit value of a free-text field: a URL that is still one, or text (atLimit). */
function valueAtLimit(schema: JsonSchema): string {
  return schema.format === 'uri' ? urlAtLimit('http://127.0.0.1:9/', schema.maxLength) : atLimit(schema.maxLength);
}

import { pbkdf2 } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { promisify } from 'node:util';
import { Agent, fetch as undiciFetch } from 'undici';
import { createHostResolver } from '../../lib/runtime/dns-resolver';
import { answeringNameserver, silentNameserver, type Nameserver } from './support/nameservers';
import { assertDeliverableUrl, classifyAddress, guardedLookup, refusal, type SsrfPolicy } from '../../lib/runtime/ssrf-guard';

const strict: SsrfPolicy = { allowLoopback: false, allowPrivate: false };
const loopbackOk: SsrfPolicy = { allowLoopback: true, allowPrivate: false };
const privateOk: SsrfPolicy = { allowLoopback: false, allowPrivate: true };
/** The system's nameservers, as a deployment without DNS_SERVERS uses them. */
const resolver = createHostResolver({ timeoutMs: 1500, tries: 2 });

describe('classifying addresses', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    // IPv4 inside IPv6 is judged as the IPv4 it carries.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['::ffff:192.168.0.1', 'private'],
  ])('%s is %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    '%s is public',
    (ip) => {
      expect(classifyAddress(ip)).toBeNull();
    },
  );

  it('throws on what is not an address', () => {
    expect(() => classifyAddress('localhost')).toThrow(TypeError);
  });
});

describe('the policy', () => {
  it('allows loopback only when WEBHOOK_ALLOW_INSECURE_LOOPBACK is on', () => {
    expect(refusal('127.0.0.1', strict)).toBe('loopback');
    expect(refusal('127.0.0.1', loopbackOk)).toBeNull();
    expect(refusal('127.0.0.1', privateOk)).toBe('loopback');
  });

  it('allows private, CGNAT, link-local and unique-local only when WEBHOOK_ALLOW_PRIVATE_NETWORKS is on', () => {
    for (const ip of ['10.1.2.3', '100.64.1.1', '169.254.9.9', 'fd00::5']) {
      expect(refusal(ip, strict)).not.toBeNull();
      expect(refusal(ip, privateOk)).toBeNull();
    }
  });

  it('never allows cloud metadata, unspecified or multicast addresses', () => {
    const everything: SsrfPolicy = { allowLoopback: true, allowPrivate: true };
    for (const ip of ['169.254.169.254', 'fd00:ec2::254', '0.0.0.0', '::', '224.0.0.251'])
      expect(refusal(ip, everything)).not.toBeNull();
  });
});

describe('at registration: assertDeliverableUrl', () => {
  it("resolves the hostname and refuses a name that resolves to loopback (localhost, and this host's own name)", async () => {
    await expect(assertDeliverableUrl('https://localhost/hook', strict, resolver)).rejects.toMatchObject({
      status: 400,
      code: 'WEBHOOK_URL_FORBIDDEN',
      addressClass: 'loopback',
    });
    await expect(assertDeliverableUrl('https://localhost/hook', loopbackOk, resolver)).resolves.toBeUndefined();
    // This machine's own name resolves to loopback or a private address: refused either way.
    await expect(assertDeliverableUrl(`https://${hostname()}/hook`, strict, resolver)).rejects.toMatchObject({
      code: 'WEBHOOK_URL_FORBIDDEN',
    });
  });

  it('judges literal addresses without a lookup, bracketed IPv6 included', async () => {
    await expect(
      assertDeliverableUrl('https://169.254.169.254/latest/meta-data', loopbackOk, resolver),
    ).rejects.toMatchObject({
      addressClass: 'metadata',
    });
    await expect(assertDeliverableUrl('https://[::ffff:10.0.0.1]/x', strict, resolver)).rejects.toMatchObject({
      addressClass: 'private',
    });
    await expect(assertDeliverableUrl('https://[fd00::1]:8443/x', strict, resolver)).rejects.toMatchObject({
      addressClass: 'unique-local',
    });
    await expect(assertDeliverableUrl('https://93.184.215.14/x', strict, resolver)).resolves.toBeUndefined();
  });

  it('catches the shorthand forms WHATWG URL normalises to loopback', async () => {
    // new URL() turns these into 127.0.0.1 / 0.0.0.0 before the guard sees them.
    for (const url of ['http://2130706433/', 'http://0x7f.1/', 'http://127.1/']) {
      await expect(assertDeliverableUrl(url, strict, resolver)).rejects.toMatchObject({ addressClass: 'loopback' });
    }
    await expect(assertDeliverableUrl('http://0/', loopbackOk, resolver)).rejects.toMatchObject({
      addressClass: 'unspecified',
    });
  });

  it('answers a name that does not resolve with WEBHOOK_URL_UNRESOLVABLE', async () => {
    await expect(assertDeliverableUrl('https://no-such-host.invalid/x', strict, resolver)).rejects.toMatchObject({
      status: 400,
      code: 'WEBHOOK_URL_UNRESOLVABLE',
    });
  });
});

describe('at connect time: guardedLookup', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((_req, res) => res.writeHead(200).end('reached'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  const get = (policy: SsrfPolicy) =>
    new Promise<{ status?: number; error?: { code?: string } }>((resolve) => {
      const req = request(
        { host: 'localhost', port, path: '/', lookup: guardedLookup(policy, resolver), timeout: 5000 },
        (res) => {
          res.resume().on('end', () => resolve({ status: res.statusCode }));
        },
      );
      req.on('error', (error: { code?: string }) => resolve({ error }));
      req.end();
    });

  it('refuses an http.request whose name resolves to a refused address, before connecting', async () => {
    const hits: string[] = [];
    server.on('request', (req) => hits.push(req.url!));
    expect(await get(strict)).toEqual({ error: expect.objectContaining({ code: 'WEBHOOK_URL_FORBIDDEN' }) });
    expect(hits).toEqual([]);
    expect(await get(loopbackOk)).toEqual({ status: 200 });
    expect(hits).toEqual(['/']);
  });

  it("works as undici's connect.lookup, as a fetch-based delivery would use it", async () => {
    const refusedAgent = new Agent({ connect: { lookup: guardedLookup(strict, resolver), timeout: 5000 } });
    const allowedAgent = new Agent({ connect: { lookup: guardedLookup(loopbackOk, resolver), timeout: 5000 } });
    try {
      const refused = await undiciFetch(`http://localhost:${port}/`, {
        dispatcher: refusedAgent,
        signal: AbortSignal.timeout(10_000),
      }).catch((e: Error & { cause?: { code?: string } }) => e);
      expect(refused).toBeInstanceOf(Error);
      expect((refused as Error & { cause?: { code?: string } }).cause?.code).toBe('WEBHOOK_URL_FORBIDDEN');
      const allowed = await undiciFetch(`http://localhost:${port}/`, {
        dispatcher: allowedAgent,
        signal: AbortSignal.timeout(10_000),
      });
      expect(await allowed.text()).toBe('reached');
    } finally {
      await Promise.all([refusedAgent.close(), allowedAgent.close()]);
    }
  });

  it('hands back every address when asked for all, and one when not', async () => {
    const lookup = guardedLookup(loopbackOk, resolver);
    const all = await new Promise((resolve, reject) =>
      lookup('localhost', { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
    );
    expect(all).toEqual(expect.arrayContaining([expect.objectContaining({ address: '127.0.0.1', family: 4 })]));
    const one = await new Promise((resolve, reject) =>
      lookup('localhost', { family: 4 }, (err, address, family) => (err ? reject(err) : resolve([address, family]))),
    );
    expect(one).toEqual(['127.0.0.1', 4]);
  });
});

describe("the process's own resolver (lib/runtime/dns-resolver.ts)", () => {
  const servers: Nameserver[] = [];
  afterAll(() => Promise.all(servers.map((s) => s.stop())));
  const start = async (made: Promise<Nameserver>) => {
    const s = await made;
    servers.push(s);
    return s;
  };

  it('checks every address a nameserver answers, at registration and at connect time', async () => {
    const mixed = await start(answeringNameserver(['93.184.215.14', '10.1.2.3']));
    const viaMixed = createHostResolver({ servers: [mixed.address], timeoutMs: 1000, tries: 1 });
    await expect(assertDeliverableUrl('https://hooks.example.com/x', strict, viaMixed)).rejects.toMatchObject({
      code: 'WEBHOOK_URL_FORBIDDEN',
      address: '10.1.2.3',
      addressClass: 'private',
    });
    const refused = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup(strict, viaMixed)('hooks.example.com', { all: true }, (err) => resolve(err)),
    );
    expect(refused).toMatchObject({ code: 'WEBHOOK_URL_FORBIDDEN', address: '10.1.2.3' });

    const public_ = await start(answeringNameserver(['93.184.215.14']));
    const viaPublic = createHostResolver({ servers: [public_.address], timeoutMs: 1000, tries: 1 });
    await expect(assertDeliverableUrl('https://hooks.example.com/x', strict, viaPublic)).resolves.toBeUndefined();
  });

  it('gives up on a nameserver that never answers by its own deadline, leaving the libuv pool to everyone else', async () => {
    const silent = await start(silentNameserver());
    const resolver = createHostResolver({ servers: [silent.address], timeoutMs: 300, tries: 2 });
    let settled = 0;
    const stuck = Array.from({ length: 10 }, (_, i) =>
      resolver
        .resolve(`host-${i}.never-answers.example`)
        .then(
          () => 'resolved',
          (err: NodeJS.ErrnoException) => err.code,
        )
        .finally(() => settled++),
    );
    // Work that needs libuv's threads (key derivation, getaddrinfo, file reads) finishes meanwhile.
    await Promise.all([
      ...Array.from({ length: 8 }, () => promisify(pbkdf2)('x', 'salt', 1000, 32, 'sha256')),
      lookup('localhost'),
      readFile(__filename),
    ]);
    expect(settled).toBe(0);
    expect(await Promise.all(stuck)).toEqual(Array(10).fill('ETIMEOUT'));
    // An address the nameserver never gave is refused at connect time too, not connected to.
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup(loopbackOk, resolver)('late.never-answers.example', {}, (e) => resolve(e)),
    );
    expect(err?.code).toBe('ETIMEOUT');
  });

  it('asks once for a host that many lookups want at the same time', async () => {
    const [once, burst] = [await start(silentNameserver()), await start(silentNameserver())];
    const options = { timeoutMs: 200, tries: 1 };
    await createHostResolver({ servers: [once.address], ...options })
      .resolve('one.never-answers.example')
      .catch(() => null);
    const shared = createHostResolver({ servers: [burst.address], ...options });
    await Promise.all(Array.from({ length: 10 }, () => shared.resolve('one.never-answers.example').catch(() => null)));
    expect(once.queries).toBeGreaterThan(0);
    expect(burst.queries).toBe(once.queries);
  });
});

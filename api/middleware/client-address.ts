import { randomBytes, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { Context, Middleware } from 'koa';
import type { Config } from '../../lib/runtime/config';

/**
 * The console's calls to this API carry the person's address in these headers, with a proof only
 * this process knows (drawn at start, never sent off the host: the console calls its own listening
 * socket, console/api-client.ts). Any other client's copy of the headers is ignored.
 */
const CONSOLE_CLIENT_HEADER = 'x-tranche-console-client';
const CONSOLE_PROOF_HEADER = 'x-tranche-console-proof';
const CONSOLE_PROOF = randomBytes(32).toString('base64url');

/** The headers the console adds to its API calls, naming the person's address (decision 0273). */
export const consoleClientHeaders = (address: string): Record<string, string> =>
  address ? { [CONSOLE_CLIENT_HEADER]: address, [CONSOLE_PROOF_HEADER]: CONSOLE_PROOF } : {};

const fromConsole = (ctx: Context) => {
  const proof = Buffer.from(ctx.get(CONSOLE_PROOF_HEADER));
  const expected = Buffer.from(CONSOLE_PROOF);
  return proof.length === expected.length && timingSafeEqual(proof, expected);
};

/** IPv4 as itself even when the socket speaks IPv6 (::ffff:a.b.c.d), and without an IPv6 zone. */
const plain = (address: string) => address.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1').replace(/%.*$/, '');

/** TRUSTED_PROXIES as a block list: addresses and CIDR ranges, IPv4 or IPv6. */
function trustedProxyList(ranges: string[]): BlockList {
  const list = new BlockList();
  for (const range of ranges) {
    const [net, bits] = range.split('/');
    const type = isIP(net!) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(net!, type);
    else list.addSubnet(net!, Number(bits), type);
  }
  return list;
}

/**
 * The client's address, as audit entries and per-address limits see it (`ctx.ip` from here on):
 * - the console's own calls: the address of the person who made the console request;
 * - with TRUSTED_PROXIES: the socket's peer if it is not a trusted proxy; else X-Forwarded-For read
 *   from the right, past every trusted proxy, to the first hop that is not one (what a client
 *   prepends sits left of that and is never reached);
 * - else as Koa reads it (TRUST_PROXY and TRUST_PROXY_HOPS, docs/decisions/0126-client-addresses.md).
 * Decision 0273 (docs/decisions/0273-client-addresses-from-trusted-hops.md).
 */
export function clientAddress(config: Pick<Config, 'TRUSTED_PROXIES'>): Middleware {
  const trusted = config.TRUSTED_PROXIES.length ? trustedProxyList(config.TRUSTED_PROXIES) : null;
  const isTrusted = (address: string) => {
    const family = isIP(address);
    return family !== 0 && trusted!.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
  return async (ctx, next) => {
    if (ctx.get(CONSOLE_CLIENT_HEADER) && fromConsole(ctx)) {
      ctx.request.ip = plain(ctx.get(CONSOLE_CLIENT_HEADER));
    } else if (trusted) {
      let address = plain(ctx.req.socket.remoteAddress ?? '');
      const hops = ctx
        .get('x-forwarded-for')
        .split(',')
        .map((h) => plain(h.trim()))
        .filter(Boolean);
      while (isTrusted(address) && hops.length) {
        const next = hops.pop()!;
        if (!isIP(next)) break; // a hop that is no address: the last trusted proxy is as far as we can see
        address = next;
      }
      ctx.request.ip = address;
    }
    await next();
  };
}

import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';

/** The pieces lib/runtime/settings/ builds its settings from: the forms a value may take. */
export const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
/** A setting whose empty value means unset (compose's `${NAME:-}` passes one through when it is not set). */
export const blankAsUnset = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema);

export function parseKeyring(text: string, ctx: z.RefinementCtx): { id: string; key: Buffer }[] {
  const ring = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const at = entry.indexOf(':');
      return { id: entry.slice(0, at), key: Buffer.from(entry.slice(at + 1), 'base64') };
    });
  const bad = ring.length === 0 || ring.some((k) => !/^[A-Za-z0-9_-]{1,32}$/.test(k.id) || k.key.length !== 32);
  const duplicate = new Set(ring.map((k) => k.id)).size !== ring.length;
  if (bad || duplicate) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be `<key id>:<base64 of 32 bytes>`, comma-separated, ids unique (letters, digits, - and _)',
    });
    return z.NEVER;
  }
  return ring;
}

/** A keyring file: the same entries as the variable, by commas or one a line. */
export function readKeyFile(path: string, ctx: z.RefinementCtx): string | undefined {
  try {
    return readFileSync(path, 'utf8').replace(/\s*\n\s*/g, ',');
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `cannot read ${path} (${(err as NodeJS.ErrnoException).code})` });
    return undefined;
  }
}

/** `10.0.0.0/8,192.0.2.7,fd00::/8`: each an address (a range of one) or a CIDR range. */
export function parseAddressRanges(
  text: string,
  ctx: z.RefinementCtx,
): { address: string; prefix: number; family: 'ipv4' | 'ipv6' }[] {
  const ranges = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const [address = '', bits] = entry.split('/', 2);
      const version = isIP(address);
      const max = version === 4 ? 32 : 128;
      const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
      return version && prefix >= 0 && prefix <= max
        ? { address, prefix, family: version === 4 ? ('ipv4' as const) : ('ipv6' as const) }
        : null;
    });
  if (ranges.some((r) => r === null)) {
    ctx.addIssue({ code: 'custom', message: 'must be IP addresses or CIDR ranges, comma-separated' });
    return z.NEVER;
  }
  return ranges as NonNullable<(typeof ranges)[number]>[];
}

export function parseJson(text: string, ctx: z.RefinementCtx): unknown {
  try {
    return JSON.parse(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be JSON' });
    return z.NEVER;
  }
}

/**
 * An egress proxy (docs/decisions/0405-egress-through-a-connect-proxy.md): where it listens and the
 * Proxy-Authorization its credentials make. Printed (log, JSON, inspect) as host:port only: the
 * credentials are a secret.
 */
export interface EgressProxy {
  host: string;
  port: number;
  /** `host:port` (`[v6]:port`): how logs and /ready name it. */
  address: string;
  /** `Basic <base64>` from the URL's user and password, or null when it has none. */
  authorization: string | null;
}

/** `http://[user:password@]host:port`: a CONNECT proxy spoken to in plain TCP (TLS to a target runs inside the tunnel). */
export function parseProxyUrl(text: string, ctx: z.RefinementCtx): EgressProxy {
  const fail = (message: string) => {
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail('must be a URL: http://[user:password@]host:port');
  }
  if (url.protocol !== 'http:')
    return fail('must be an http:// proxy URL (CONNECT over plain TCP; https:// and socks proxies are not supported)');
  if (url.port === '') return fail('must name its port: http://host:port');
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '')
    return fail('must be the proxy alone, with no path, query or fragment: http://[user:password@]host:port');
  let authorization: string | null = null;
  if (url.username !== '' || url.password !== '') {
    let pair: string;
    try {
      pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    } catch {
      return fail('its credentials must be percent-encoded UTF-8');
    }
    authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const address = `${isIP(host) === 6 ? `[${host}]` : host}:${url.port}`;
  const proxy = { host, port: Number(url.port), address, authorization };
  // Never the credentials, whichever way the configuration is printed.
  Object.defineProperties(proxy, {
    authorization: { value: authorization, enumerable: false },
    toJSON: { value: () => address, enumerable: false },
    [Symbol.for('nodejs.util.inspect.custom')]: { value: () => address, enumerable: false },
  });
  return proxy;
}

/** One WEBHOOK_NO_PROXY entry: every host, a name and its subdomains, or an address range. */
export type NoProxyRule =
  | { kind: 'all' }
  | { kind: 'domain'; name: string }
  | { kind: 'range'; address: string; prefix: number; family: 'ipv4' | 'ipv6' };

/**
 * `internal.example, .corp.example, 10.0.0.0/8, 192.0.2.7, *`: comma-separated, as `no_proxy`
 * conventions go (docs/decisions/0405-egress-through-a-connect-proxy.md). A name matches itself and its
 * subdomains (a leading dot or `*.` means the same); an address or CIDR range matches the address
 * the target resolved to; `*` sends everything direct. No ports.
 */
export function parseNoProxy(text: string, ctx: z.RefinementCtx): NoProxyRule[] {
  const rules: NoProxyRule[] = [];
  for (const raw of text.split(',').map((e) => e.trim().toLowerCase())) {
    if (raw === '') continue;
    if (raw === '*') {
      rules.push({ kind: 'all' });
      continue;
    }
    const bare = raw.replace(/^\[|\]$/g, '');
    const [address = '', bits] = bare.split('/', 2);
    const version = isIP(address);
    if (version) {
      const max = version === 4 ? 32 : 128;
      const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
      if (!(prefix >= 0 && prefix <= max)) {
        ctx.addIssue({ code: 'custom', message: `${raw}: not a CIDR range` });
        return z.NEVER;
      }
      rules.push({ kind: 'range', address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' });
      continue;
    }
    const name = raw.replace(/^\*?\./, '').replace(/\.$/, '');
    if (!/^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/.test(name)) {
      ctx.addIssue({
        code: 'custom',
        message: `${raw}: must be a host name or domain, an IP address or CIDR range, or * (no ports, no wildcards inside a name)`,
      });
      return z.NEVER;
    }
    rules.push({ kind: 'domain', name });
  }
  return rules;
}

import type { LookupAddress, LookupAllOptions, LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { AppError } from '../errors';
import type { Config } from './config';
import type { HostResolver } from './dns-resolver';

/**
 * Refuses webhook targets inside the service's own network (SSRF): checked when an endpoint is
 * registered (the hostname is resolved) and again at connect time (`guardedLookup`), because a
 * name can resolve elsewhere by the time of delivery (DNS rebinding).
 */
export type AddressClass =
  | 'metadata' // cloud instance metadata: never, whatever the configuration
  | 'unspecified' // 0.0.0.0/8 and ::, which Linux connects to the local host
  | 'multicast'
  | 'reserved'
  | 'loopback'
  | 'private'
  | 'cgnat'
  | 'link-local'
  | 'unique-local';

export interface SsrfPolicy {
  /** WEBHOOK_ALLOW_INSECURE_LOOPBACK: local development and tests deliver to 127.0.0.1. */
  allowLoopback: boolean;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: an on-premises receiver on RFC 1918, CGNAT, link-local or ULA. */
  allowPrivate: boolean;
}

export const policyFromConfig = (
  c: Pick<Config, 'WEBHOOK_ALLOW_INSECURE_LOOPBACK' | 'WEBHOOK_ALLOW_PRIVATE_NETWORKS'>,
): SsrfPolicy => ({
  allowLoopback: c.WEBHOOK_ALLOW_INSECURE_LOOPBACK,
  allowPrivate: c.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
});

function list(v4: string[], v6: string[] = []): BlockList {
  const b = new BlockList();
  for (const cidr of v4) add(b, cidr, 'ipv4');
  for (const cidr of v6) add(b, cidr, 'ipv6');
  return b;
}
function add(b: BlockList, cidr: string, type: 'ipv4' | 'ipv6'): void {
  const [net, bits] = cidr.split('/');
  if (bits === undefined) b.addAddress(net!, type);
  else b.addSubnet(net!, Number(bits), type);
}

// Checked in this order: the first class that holds the address names it.
const CLASSES: [AddressClass, BlockList][] = [
  // AWS/GCP/Azure/OpenStack 169.254.169.254, AWS ECS task metadata, AWS IPv6 IMDS, Alibaba,
  // Oracle, Azure's wire server (a public address that answers only inside Azure).
  [
    'metadata',
    list(['169.254.169.254', '169.254.170.2', '100.100.100.200', '192.0.0.192', '168.63.129.16'], ['fd00:ec2::254']),
  ],
  ['unspecified', list(['0.0.0.0/8'], ['::/128'])],
  ['multicast', list(['224.0.0.0/4'], ['ff00::/8'])],
  ['reserved', list(['240.0.0.0/4', '192.0.0.0/24', '198.18.0.0/15'], ['100::/64', '2001:db8::/32'])],
  ['loopback', list(['127.0.0.0/8'], ['::1/128'])],
  ['private', list(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'], ['fec0::/10'])],
  ['cgnat', list(['100.64.0.0/10'])],
  ['link-local', list(['169.254.0.0/16'], ['fe80::/10'])],
  ['unique-local', list([], ['fc00::/7'])],
];
const PRIVATE_CLASSES = new Set<AddressClass>(['private', 'cgnat', 'link-local', 'unique-local']);

/** An IPv4 address carried inside IPv6 (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96). */
function embeddedIpv4(ip: string): string | undefined {
  const m = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (m) return m[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
  if (!hex) return undefined;
  const [hi, lo] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

/**
 * The class of a literal address, or null for an ordinary public one. Throws on a non-address.
 * @internal exported for its tests
 */
export function classifyAddress(address: string): AddressClass | null {
  const ip = address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''); // brackets and an IPv6 zone id
  const family = isIP(ip);
  if (family === 0) throw new TypeError(`not an IP address: ${address}`);
  const v4 = family === 6 ? embeddedIpv4(ip) : undefined;
  const [probe, type] = v4 ? [v4, 'ipv4' as const] : [ip, family === 4 ? ('ipv4' as const) : ('ipv6' as const)];
  for (const [cls, blocks] of CLASSES) if (blocks.check(probe, type)) return cls;
  return null;
}

/** Why an address is refused under the policy, or null when a delivery may go there (also the proxy's connector's check of a literal). */
export function refusal(address: string, policy: SsrfPolicy): AddressClass | null {
  const cls = classifyAddress(address);
  if (cls === null) return null;
  if (cls === 'loopback' && policy.allowLoopback) return null;
  if (PRIVATE_CLASSES.has(cls) && policy.allowPrivate) return null;
  return cls;
}

/** A 400 at registration; at connect time its `code` (WEBHOOK_URL_FORBIDDEN) is what an attempt records. */
export class SsrfRefusedError extends AppError {
  constructor(
    readonly host: string,
    readonly address: string,
    readonly addressClass: AddressClass,
  ) {
    super(
      400,
      'WEBHOOK_URL_FORBIDDEN',
      `Invalid webhook url: ${host} resolves to a ${addressClass} address (${address}), which deliveries may not reach`,
    );
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** Every address a hostname resolves to, by the process's resolver (lib/runtime/dns-resolver.ts: its own timeout, not the libuv pool). */
async function resolveAll(hostname: string, resolver: HostResolver): Promise<LookupAddress[]> {
  try {
    return await resolver.resolve(hostname);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'ENOTFOUND';
    throw new AppError(
      400,
      'WEBHOOK_URL_UNRESOLVABLE',
      code === 'ETIMEOUT'
        ? `Invalid webhook url: ${hostname} did not resolve in time`
        : `Invalid webhook url: ${hostname} does not resolve (${code})`,
    );
  }
}

/** The refusal of a URL whose host is a literal address the policy forbids; null otherwise (a name is checked at connect). */
export function refusedLiteral(raw: string, policy: SsrfPolicy): SsrfRefusedError | null {
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  const cls = isIP(host) ? refusal(host, policy) : null;
  return cls ? new SsrfRefusedError(host, host, cls) : null;
}

/**
 * Registration-time check: the URL's host, literal or resolved, must have no refused address.
 * Every address counts, not just the first: a connection may pick any of them.
 */
export async function assertDeliverableUrl(raw: string, policy: SsrfPolicy, resolver: HostResolver): Promise<void> {
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolveAll(host, resolver);
  for (const { address } of addresses) {
    const cls = refusal(address, policy);
    if (cls) throw new SsrfRefusedError(host, address, cls);
  }
}

/**
 * Connect-time check, as the `lookup` option of http.request/https.request or undici's
 * `connect.lookup`: resolves with the process's resolver (as registration does), then refuses the
 * connection if any address it would hand back is refused. A literal IP in the URL never reaches a
 * lookup, so `assertDeliverableUrl` must also run before each attempt (it costs nothing for a literal).
 */
export function guardedLookup(policy: SsrfPolicy, resolver: HostResolver) {
  return function lookup(
    hostname: string,
    options: LookupOptions | LookupAllOptions | number | LookupCallback,
    callback?: LookupCallback,
  ): void {
    const cb = (typeof options === 'function' ? options : callback)!;
    const opts: LookupOptions =
      typeof options === 'object' ? options : typeof options === 'number' ? { family: options } : {};
    resolver.resolve(hostname).then(
      (resolved) => {
        for (const { address } of resolved) {
          const cls = refusal(address, policy);
          if (cls) return cb(new SsrfRefusedError(hostname, address, cls) as unknown as NodeJS.ErrnoException, '');
        }
        // Every address was checked above; the connection may take those of the family it asked for.
        const addresses = opts.family ? resolved.filter((a) => a.family === opts.family) : resolved;
        if (opts.all) return cb(null, addresses);
        const first = addresses[0];
        if (!first) return cb(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
        cb(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => cb(err, ''),
    );
  };
}

import { Resolver } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { Config } from './config';

/**
 * Webhook hosts are resolved here, never with dns.lookup: that runs getaddrinfo on libuv's four
 * shared threads, so a burst of lookups of a name whose nameserver never answers queued every
 * other lookup of the process (and file work, and the database's reconnects) behind it. This one
 * asks the nameservers itself over c-ares's own sockets (node:dns Resolver), with its own timeout
 * and tries, and a deadline over both; lookups of one host in flight at once share one query, so a
 * burst to one slow host costs one query, not a burst (docs/decisions/0274-dns-off-the-shared-path.md).
 */
export interface HostResolver {
  /** Every address of the host (IPv4 and IPv6), or a rejection whose `code` says why (ENOTFOUND, ETIMEOUT, …). */
  resolve(hostname: string): Promise<LookupAddress[]>;
}

export interface ResolverOptions {
  /** Nameservers (`ip` or `ip:port`); unset, the system's (/etc/resolv.conf). */
  servers?: string[];
  /** Each query's first wait; c-ares doubles it on each retry. */
  timeoutMs: number;
  tries: number;
  /** Where names are looked up before DNS, as getaddrinfo does; unset, /etc/hosts. */
  hostsFile?: string;
}

export const resolverOptionsFromConfig = (c: Pick<Config, 'DNS_SERVERS' | 'DNS_TIMEOUT_MS' | 'DNS_TRIES'>) => ({
  servers: c.DNS_SERVERS,
  timeoutMs: c.DNS_TIMEOUT_MS,
  tries: c.DNS_TRIES,
});

export function createHostResolver(opts: ResolverOptions): HostResolver {
  const resolver = new Resolver({ timeout: opts.timeoutMs, tries: opts.tries });
  if (opts.servers?.length) resolver.setServers(opts.servers);
  // c-ares waits timeout, then twice that, … per try; past this the caller has its answer regardless.
  const deadlineMs = opts.timeoutMs * (2 ** opts.tries - 1) + 250;
  const hosts = hostsTable(opts.hostsFile ?? '/etc/hosts');
  const inFlight = new Map<string, Promise<LookupAddress[]>>();

  async function ask(name: string): Promise<LookupAddress[]> {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
    const found = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (found.length) return found;
    // Neither family: the IPv4 answer's reason speaks for the name (ENOTFOUND, ETIMEOUT, ESERVFAIL …).
    const reason = (v4.status === 'rejected' ? v4.reason : null) as NodeJS.ErrnoException | null;
    throw dnsError(name, reason?.code === 'ENODATA' || !reason?.code ? 'ENOTFOUND' : reason.code);
  }

  function withDeadline(name: string, work: Promise<LookupAddress[]>): Promise<LookupAddress[]> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(dnsError(name, 'ETIMEOUT')), deadlineMs);
    });
    return Promise.race([work, late]).finally(() => clearTimeout(timer));
  }

  return {
    resolve(hostname: string): Promise<LookupAddress[]> {
      const name = hostname
        .replace(/^\[|\]$/g, '')
        .replace(/\.$/, '')
        .toLowerCase();
      const family = isIP(name);
      if (family) return Promise.resolve([{ address: name, family }]);
      // RFC 6761: localhost names are loopback, whatever a nameserver says.
      if (name === 'localhost' || name.endsWith('.localhost'))
        return Promise.resolve([
          { address: '127.0.0.1', family: 4 },
          { address: '::1', family: 6 },
        ]);
      const listed = hosts.get(name);
      if (listed) return Promise.resolve(listed);
      let shared = inFlight.get(name);
      if (!shared) {
        shared = withDeadline(name, ask(name)).finally(() => inFlight.delete(name));
        inFlight.set(name, shared);
      }
      return shared;
    },
  };
}

const dnsError = (hostname: string, code: string) =>
  Object.assign(new Error(`${hostname}: ${code}`), { code, hostname }) as NodeJS.ErrnoException;

/** The hosts file as getaddrinfo reads it: name (lower case) to its addresses; missing or unreadable, empty. */
function hostsTable(path: string): Map<string, LookupAddress[]> {
  const table = new Map<string, LookupAddress[]>();
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return table;
  }
  for (const line of text.split('\n')) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    const family = address ? isIP(address) : 0;
    if (!family) continue;
    for (const n of names) {
      const key = n.toLowerCase();
      table.set(key, [...(table.get(key) ?? []), { address: address!, family }]);
    }
  }
  return table;
}

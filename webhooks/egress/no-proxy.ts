import { BlockList } from 'node:net';
import type { NoProxyRule } from '../../lib/runtime/config-parsers';

/**
 * Whether a target skips the egress proxy (WEBHOOK_NO_PROXY; docs/decisions/0405-egress-through-a-connect-proxy.md):
 * its name, or a domain it is under, is listed, or the address the guard resolved it to is in a
 * listed range. Built once per process; one question per new connection.
 */
export function noProxyMatcher(rules: NoProxyRule[]): (hostname: string, address: string, family: number) => boolean {
  if (rules.some((r) => r.kind === 'all')) return () => true;
  const names = rules.flatMap((r) => (r.kind === 'domain' ? [r.name] : []));
  const ranges = new BlockList();
  let anyRange = false;
  for (const r of rules)
    if (r.kind === 'range') {
      ranges.addSubnet(r.address, r.prefix, r.family);
      anyRange = true;
    }
  return (hostname, address, family) => {
    const host = hostname.toLowerCase().replace(/\.$/, '');
    if (names.some((n) => host === n || host.endsWith(`.${n}`))) return true;
    return anyRange && ranges.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
}

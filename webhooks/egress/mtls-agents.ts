import { Agent } from 'undici';
import type { EndpointAuthentication } from '../../db/entities/webhook-rows';
import { guardedLookup, type SsrfPolicy } from '../../lib/runtime/ssrf-guard';
import type { HostResolver } from '../../lib/runtime/dns-resolver';
import { authenticationAad } from '../secrets/authentication';
import type { Connection } from './post';
import type { SecretBox } from '../secrets/secret-box';
import { proxiedConnector, type EgressRoute } from './proxy-connect';

/** Connections kept per mTLS endpoint: a receiver that demands a certificate is one integrator's. */
const CONNECTIONS_PER_ENDPOINT = 16;
/** mTLS endpoints whose pool a process keeps open at most; past it the least recently used closes. */
const POOLS_LIMIT = 1000;

/**
 * A connection pool of its own for each mTLS endpoint (docs/decisions/0319-authenticated-receivers.md):
 * a TLS session carries the client certificate it was opened with, so the process's shared pool
 * cannot carry it. Keyed by the endpoint and its sealed key (resealed on every change, so it is the
 * secret's version): a changed certificate gets a new pool and the old one closes once its requests
 * end. The same guarded lookup and connect timeout as the shared pool; with an egress proxy, the same
 * tunnels, the client certificate presented inside them.
 */
export function mtlsPools(deps: { policy: SsrfPolicy; resolver: HostResolver; box: SecretBox; route?: EgressRoute }) {
  const pools = new Map<string, { version: string; connection: Connection }>();
  const lookup = guardedLookup(deps.policy, deps.resolver);

  return {
    /** The endpoint's pool; throws if its key does not open (a recorded failure, never a wedged queue). */
    connectionFor(
      endpointId: string,
      settings: Extract<EndpointAuthentication, { type: 'mtls' }>,
      sealedKey: string,
    ): Connection {
      const held = pools.get(endpointId);
      if (held?.version === sealedKey) {
        // Most recently used last: the first entry is the one to close when the limit is reached.
        pools.delete(endpointId);
        pools.set(endpointId, held);
        return held.connection;
      }
      const key = deps.box.open(authenticationAad(endpointId), sealedKey);
      if (held) {
        pools.delete(endpointId);
        void held.connection.dispatcher.close().catch(() => undefined);
      }
      if (pools.size >= POOLS_LIMIT) {
        const [oldest, pool] = pools.entries().next().value!;
        pools.delete(oldest);
        void pool.connection.dispatcher.close().catch(() => undefined);
      }
      const tls = {
        cert: settings.client_certificate,
        key,
        ...(settings.ca_certificate !== null && { ca: settings.ca_certificate }),
      };
      const connection: Connection = {
        policy: deps.policy,
        dispatcher: new Agent({
          connect: deps.route
            ? proxiedConnector({ route: deps.route, policy: deps.policy, resolver: deps.resolver, tls })
            : { lookup, timeout: 10_000, ...tls },
          connections: CONNECTIONS_PER_ENDPOINT,
        }),
      };
      pools.set(endpointId, { version: sealedKey, connection });
      return connection;
    },
  };
}

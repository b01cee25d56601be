import { z } from 'zod';
import { blankAsUnset, bool, parseKeyring, parseNoProxy, parseProxyUrl } from '../config-parsers';

/**
 * Webhook delivery: which receivers may be reached and how, the signing secrets' keys, the engine and its
 * limits. Part of ConfigSchema (lib/runtime/config-schema.ts).
 */
export const webhookSettings = {
  /** Plain-http webhook URLs to loopback are allowed only when this is on (local development). */
  WEBHOOK_ALLOW_INSECURE_LOOPBACK: bool.default(false),
  /**
   * Webhook URLs may resolve to private (RFC 1918), CGNAT, link-local or unique-local addresses only
   * when this is on (an on-premises receiver); cloud metadata addresses stay refused (lib/runtime/ssrf-guard.ts).
   */
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool.default(false),
  /**
   * Webhook hosts are resolved by the process's own DNS client (lib/runtime/dns-resolver.ts), not the
   * system's getaddrinfo: these nameservers (`ip` or `ip:port`, comma-separated; unset: those of
   * /etc/resolv.conf), each query's first wait (doubled on each retry) and its tries.
   */
  DNS_SERVERS: blankAsUnset(
    z
      .string()
      .transform((v) =>
        v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      )
      .pipe(
        z
          .array(
            z
              .string()
              .regex(/^(\[[0-9a-fA-F:.]+\]|[0-9.]+|[0-9a-fA-F:]+)(:\d{1,5})?$/, 'an IP address, with :port if not 53'),
          )
          .min(1),
      )
      .optional(),
  ),
  DNS_TIMEOUT_MS: z.coerce.number().int().min(100).max(10_000).default(1500),
  DNS_TRIES: z.coerce.number().int().min(1).max(4).default(2),
  /**
   * An HTTP CONNECT proxy every webhook POST and OAuth2 token request goes through, so receivers see
   * the proxy's source addresses: `http://[user:password@]host:port` (docs/decisions/0405-egress-through-a-connect-proxy.md).
   * The SSRF guard still checks the target before the CONNECT, which names the address it resolved
   * to; TLS to the target runs inside the tunnel. The credentials are never logged. Unset (the
   * default): deliveries connect directly.
   */
  WEBHOOK_HTTP_PROXY: blankAsUnset(z.string().transform(parseProxyUrl).optional()),
  /**
   * Targets that skip WEBHOOK_HTTP_PROXY and connect directly, comma-separated: a host name (it and
   * its subdomains; `.example.com` and `*.example.com` mean the same), an IP address or CIDR range
   * (matched against the address the target resolves to), or `*` for every target. No ports. Read only
   * when WEBHOOK_HTTP_PROXY is set.
   */
  WEBHOOK_NO_PROXY: blankAsUnset(z.string().default('').transform(parseNoProxy)),
  /** Base64 of 32 random bytes: the AES-256-GCM key signing secrets are stored under. Required in production. */
  WEBHOOK_SECRET_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be base64 of exactly 32 bytes')
    .optional(),
  /**
   * The keyring signing secrets are sealed under, for rotation: `<key id>:<base64 of 32 bytes>`,
   * comma-separated, the current key first. The first seals; every key listed opens values sealed
   * under it (a sealed value names its key). WEBHOOK_SECRET_KEY, if also set, joins as key id `default`.
   */
  WEBHOOK_SECRET_KEYS: z
    .string()
    .optional()
    .transform((v, ctx) => (v === undefined ? undefined : parseKeyring(v, ctx))),
  /** The sweep plans events stored this long ago and never planned (docs/decisions/0182-sweep.md). */
  OUTBOX_RELAY_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(3000),
  /** How often each worker's sweep runs: the safety net for a lost notification, a dead worker's attempts, a lost hand-over. */
  WEBHOOK_SWEEP_INTERVAL_MS: z.coerce.number().int().min(50).max(600_000).default(2000),
  /**
   * Where a webhook delivery lives (docs/decisions/0297-webhook-delivery-shape-as-a-setting.md):
   * `engine` (default) sends first attempts from the worker's dispatcher and makes a delivery a
   * workflow only once its first attempt fails; `workflow` makes every delivery a Temporal workflow
   * from its first attempt (a child of the subscription workflow for its events, a top-level one
   * started by the engine for the API's), each attempt through the same sender, circuit and limits.
   * Every worker of a deployment must run the same shape.
   */
  WEBHOOK_DELIVERY_SHAPE: z.enum(['engine', 'workflow']).default('engine'),
  /** Retry scheduler workflows failed first attempts are spread over; safe to change at any time. */
  WEBHOOK_SCHEDULER_SHARDS: z.coerce.number().int().min(1).max(64).default(4),
  /** A first attempt whose dispatcher died (its liveness lock is gone) is closed as in doubt this long after it began. */
  WEBHOOK_STUCK_AFTER_MS: z.coerce.number().int().min(1000).max(86_400_000).default(60_000),
  /** Attempts in flight to one endpoint at most, from every worker, unless the endpoint sets its own `max_in_flight`. */
  WEBHOOK_DEFAULT_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(256).default(32),
  /**
   * Webhook endpoints one organisation may have (not deleted); one more is refused with 409
   * `ENDPOINT_LIMIT_REACHED` (docs/decisions/0294-endpoints-per-organisation.md). A dispatch
   * round's window is shared out by organisation whatever this is (decision 0309).
   */
  WEBHOOK_MAX_ENDPOINTS_PER_ORG: z.coerce.number().int().min(1).max(100_000).default(500),
  /**
   * First attempts one worker keeps in flight at most, across all endpoints, shared fairly by
   * organisation over the slots each already holds; the last 5% only to an organisation holding
   * fewer than that many. A slot is held while a POST is under way, never while a delivery waits
   * for its pace (docs/decisions/0309-slots-taken-at-the-post.md).
   */
  WEBHOOK_DISPATCH_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(10_000).default(1000),
  /**
   * Endpoints with queued deliveries one dispatch round looks at, shared out by organisation: each
   * organisation sees at most its part of the window per round, so no organisation fills it
   * (docs/decisions/0309-slots-taken-at-the-post.md).
   */
  WEBHOOK_DISPATCH_ENDPOINTS_PER_ROUND: z.coerce.number().int().min(1).max(10_000).default(1000),
  /** Answers in a row that say an endpoint is down (no answer, 5xx, 408, 429) before its circuit opens. */
  WEBHOOK_CIRCUIT_FAILURES: z.coerce.number().int().min(1).max(1000).default(10),
  /** An open circuit's first cool-down before a probe; each reopening doubles it, up to 16 times as long. */
  WEBHOOK_CIRCUIT_COOLDOWN_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  /** After rotate-secret, webhook-signature also carries a signature with the previous secret for this long (docs/integrators/webhooks). */
  WEBHOOK_SECRET_OVERLAP_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(30 * 86_400)
    .default(86_400),
  /** The longest wait a receiver's Retry-After (429/503) may ask for before the next attempt. */
  WEBHOOK_RETRY_AFTER_CAP_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(7 * 86_400)
    .default(86_400),
  /** An endpoint that has failed every attempt for this long is disabled (domain/endpoint-health.ts). */
  WEBHOOK_DISABLE_AFTER_FAILING_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(90 * 86_400)
    .default(5 * 86_400),
  /**
   * Failed attempts in a row (any answer but a timely 2xx, as for WEBHOOK_DISABLE_AFTER_FAILING_SECONDS) after
   * which `webhook.endpoint.failing` is published, once until the endpoint succeeds again
   * (docs/decisions/0415-operational-events.md).
   */
  WEBHOOK_FAILING_AFTER_ATTEMPTS: z.coerce.number().int().min(1).max(1000).default(5),
  /** Deliveries a bulk recovery retries per activity call (one page, retried a few at a time). */
  WEBHOOK_RECOVERY_BATCH_SIZE: z.coerce.number().int().min(1).max(5000).default(200),
  /**
   * A folder for per-hop timestamps of each webhook delivery (lib/runtime/hop-log.ts), written only while
   * a file named `on` is in it: the benchmark's per-hop breakdown. Unset (the default): nothing is
   * timed or written.
   */
  WEBHOOK_HOP_LOG_DIR: z.string().min(1).optional(),
};

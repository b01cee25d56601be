import { z } from 'zod';
import { BEHAVIOUR_SETS } from '../behaviour-set';
import { blankAsUnset, bool, parseAddressRanges, parseJson, parseKeyring, readKeyFile } from './config-parsers';

/** Every setting the service reads from its environment, in one place. */
export const ConfigSchema = z.object({
  /**
   * Unset is production: every secret required, no public fallback key or constant, no test-only
   * setting. `development` (npm start, the bench, the README's local commands) and `test` (jest,
   * scripts/with-stack.ts) are the explicit opt-in to development conveniences
   * (docs/decisions/0259-production-by-default.md).
   */
  NODE_ENV: z.enum(['development', 'test', 'production']).default('production'),
  /** @readBy the logger, from the environment: it exists before the configuration is loaded. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BEHAVIOUR_SET: z.enum(BEHAVIOUR_SETS).default('A'),

  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Address investors and processors reach this API at; used to build session and callback URLs. */
  PUBLIC_BASE_URL: z.url().optional(),

  /**
   * The services' connection (API, worker, the scripts that serve): a role with row rights only,
   * a member of `tranche_service` (migration 0063): on audit_events INSERT and SELECT, no DDL, not
   * an owner, not a superuser (docs/decisions/0265-database-roles-owner-and-service.md).
   * `npm start`'s embedded one: postgres://tranche_app:tranche-app@127.0.0.1:5433/tranche.
   */
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }),
  /**
   * The owner role's connection, for migrations only (`npm run migrate`; a service given it migrates
   * through it at start, then closes it). Unset: migrations pending at start are tried through
   * DATABASE_URL, which a least-privilege role cannot apply. `npm start`'s embedded one:
   * postgres://postgres:tranche@127.0.0.1:5433/tranche.
   */
  DATABASE_MIGRATION_URL: blankAsUnset(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),

  TEMPORAL_ADDRESS: z.string().min(1).default('localhost:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('tranche'),
  /**
   * TLS to Temporal (Temporal Cloud, or a cluster with mTLS): PEM files of the client certificate
   * and key (mTLS), of the CA that signed the server (unset: the system's), and the name the server's
   * certificate must carry (unset: the host of TEMPORAL_ADDRESS). Any of them turns TLS on.
   */
  TEMPORAL_TLS: bool.default(false),
  TEMPORAL_TLS_CERT_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_CA_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  /** API key for Temporal Cloud (sent as a bearer token; implies TLS). */
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  /**
   * Worker: on SIGTERM, how long running activities may finish before they are cancelled. Longer
   * than a webhook attempt's 30 s (spec §6.5), so a deploy does not cut an attempt and resend it.
   */
  WORKER_SHUTDOWN_GRACE_SECONDS: z.coerce.number().int().min(31).max(600).default(40),
  /**
   * Workflows a worker keeps in memory; the rest replay their short history when next needed. About
   * 0.8 MiB each, heap and SDK core together (bench: 200 cached, 550 MiB RSS; 100 cached, 471 MiB, at
   * the same lifecycle rate). Waiting retries do not add to it: they sleep in Temporal.
   */
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).max(100_000).default(100),

  /** PKCS#8 PEM of the ES256 key that signs access tokens. Unset: a fresh key per process (dev/test only). */
  ACCESS_TOKEN_PRIVATE_KEY: z.string().includes('PRIVATE KEY').optional(),
  /**
   * The other keys of an access-token key rotation, published in the JWKS and accepted: PEM blocks
   * (public or private; only the public half is used) of the next key before it signs, and of the
   * previous key until its last tokens expire (docs/decisions/0137-access-token-key-rotation.md).
   */
  // Empty counts as unset: compose passes `${ACCESS_TOKEN_PUBLISHED_KEYS:-}` when there is no rotation.
  ACCESS_TOKEN_PUBLISHED_KEYS: blankAsUnset(z.string().includes('-----BEGIN').optional()),
  ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(900),

  /**
   * Identity providers whose ID tokens the exchange accepts: a JSON list of
   * {"issuer","jwks_uri","audience","org_ids"?}; org_ids pins an issuer to those organisations.
   */
  OIDC_ISSUERS: z
    .string()
    .default('[]')
    .transform(parseJson)
    .pipe(
      z.array(
        z.object({
          issuer: z.url(),
          jwks_uri: z.url({ protocol: /^https?$/ }),
          audience: z.string().min(1),
          org_ids: z.array(z.uuid()).min(1).optional(),
        }),
      ),
    ),
  /** Bounds on fetching an issuer's JWKS: request timeout, cache lifetime, minimum gap between refetches. */
  OIDC_JWKS_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(5000),
  OIDC_JWKS_CACHE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(600),
  OIDC_JWKS_COOLDOWN_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  /**
   * The embedded development identity provider under /dev-idp, which mints tokens for anyone. Off
   * unless turned on (`npm start` turns it on for its embedded stack); refused in production.
   */
  DEV_IDP_ENABLED: bool.default(false),
  /** Operator console (/console/): the Temporal Web UI its workflow links point at. */
  TEMPORAL_UI_URL: z.url({ protocol: /^https?$/ }).default('http://localhost:8233'),
  /**
   * The identity provider staff sign in to the console with (OIDC authorization code + PKCE). Unset:
   * the development identity provider when it is on, else the console's sign-in is closed. Must be
   * one of OIDC_ISSUERS, pinned with org_ids (docs/decisions/0101-console-sign-in.md).
   */
  CONSOLE_OIDC_ISSUER: z.url().optional(),
  /** The console's client id and (for a confidential client) secret at that provider. */
  CONSOLE_OIDC_CLIENT_ID: z.string().min(1).optional(),
  CONSOLE_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  /**
   * A console session is renewed while its person works, but never past this long after
   * the sign-in: then the identity provider is asked again (and roles it removed take effect).
   */
  CONSOLE_SESSION_MAX_SECONDS: z.coerce.number().int().min(60).max(604_800).default(43_200),
  /**
   * How long an API process trusts its last look at whether a token's API key or console session
   * still stands: a revocation reaches every instance within this long (the console's own pages
   * look every time). 0 looks on every request (docs/decisions/0272-revocation-at-verify.md).
   */
  TOKEN_REVOCATION_CACHE_SECONDS: z.coerce.number().int().min(0).max(300).default(30),
  /**
   * Token exchanges allowed per window, counted per presented API key (a backend exchanging for its
   * users: 1,200 a minute, 20 a second sustained) and per client address (failed attempts included).
   */
  EXCHANGE_RATE_LIMIT_PER_KEY: z.coerce.number().int().min(1).default(1200),
  EXCHANGE_RATE_LIMIT_PER_ADDRESS: z.coerce.number().int().min(1).default(1200),
  EXCHANGE_RATE_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  /** HMAC-SHA256 secret the KYC/accreditation provider signs its notifications with. Unset: notifications are refused. */
  IDENTITY_PROVIDER_WEBHOOK_SECRET: z.string().min(32).optional(),

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
  /**
   * The keyring Temporal payloads are sealed under (lib/runtime/payload-codec.ts, docs/decisions/0306): `<key id>:<base64 of
   * 32 bytes>`, comma-separated, the current key first. Every client and worker encrypts workflow inputs, results and
   * messages before they reach Temporal's server. Required in production (or TEMPORAL_PAYLOAD_KEYS_FILE).
   */
  TEMPORAL_PAYLOAD_KEYS: z
    .string()
    .optional()
    .transform((v, ctx) => (v === undefined ? undefined : parseKeyring(v, ctx))),
  /** A file holding the payload keyring in TEMPORAL_PAYLOAD_KEYS's form (a mounted secret), read once at start. */
  TEMPORAL_PAYLOAD_KEYS_FILE: z
    .string()
    .optional()
    .transform((path, ctx) => {
      if (path === undefined) return undefined;
      const text = readKeyFile(path, ctx);
      return text === undefined ? z.NEVER : parseKeyring(text, ctx);
    }),
  /**
   * Organisations whose administrators may read payloads in clear through the codec server (/codec, for the
   * Temporal Web UI and CLI): the deployment's operators, comma-separated UUIDs. Unset: none.
   */
  CODEC_SERVER_ORG_IDS: z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.uuid())),
  /** A bearer token (32+ characters) that may use the codec server, for the Temporal CLI's --codec-auth. Unset: none. */
  CODEC_SERVER_TOKEN: z.string().min(32).optional(),
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
  /** After rotate-secret, webhook-signature also carries a signature with the previous secret for this long (docs/consumers). */
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
  /** Deliveries a bulk recovery retries per activity call (one page, retried a few at a time). */
  WEBHOOK_RECOVERY_BATCH_SIZE: z.coerce.number().int().min(1).max(5000).default(200),

  /** Largest JSON request body accepted, in kilobytes; a larger one is answered 413 PAYLOAD_TOO_LARGE. */
  BODY_LIMIT_KB: z.coerce.number().int().min(1).max(10_240).default(100),
  /** Writes (POST/PUT/PATCH/DELETE) allowed per window, counted per access-token subject, else per client address. */
  WRITE_RATE_LIMIT: z.coerce.number().int().min(1).default(120),
  WRITE_RATE_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  /** How long a command waits for its workflow to answer; past it the answer is 503 COMMAND_OUTCOME_UNKNOWN. */
  COMMAND_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),
  /** How long an Idempotency-Key is remembered (per caller, method and path) and its first answer replayed. */
  IDEMPOTENCY_KEY_TTL_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 30)
    .default(24),
  /** In seconds, replacing IDEMPOTENCY_KEY_TTL_HOURS when set: for a soak or a test, never production. */
  IDEMPOTENCY_KEY_TTL_SECONDS: z.coerce.number().int().min(1).optional(),
  /**
   * Signed notifications from payment processors and the identity provider, counted per sending
   * address apart from investors' writes (a processor sends for every investor at once).
   */
  NOTIFICATION_RATE_LIMIT: z.coerce.number().int().min(1).default(6000),
  /**
   * Take the client address from X-Forwarded-For. Only behind a proxy that sets it: otherwise any
   * client could claim a fresh address per request and escape every per-address limit.
   */
  TRUST_PROXY: bool.default(false),
  /** Proxies in front of the API that append to X-Forwarded-For; the client address is the entry they appended. */
  TRUST_PROXY_HOPS: z.coerce.number().int().min(1).max(10).default(1),
  /**
   * The proxies whose X-Forwarded-For is believed (addresses or CIDR ranges, space- or comma-separated:
   * the gateway, the load balancer before it). When set it replaces TRUST_PROXY's hop count: the
   * client is the first address, read from the right, that is not one of these. The shipped
   * gateway (deploy/gateway/Caddyfile) reads the same variable. Unset: none.
   */
  TRUSTED_PROXIES: blankAsUnset(
    z
      .string()
      .default('')
      .transform((v) => v.split(/[\s,]+/).filter(Boolean))
      .pipe(z.array(z.union([z.cidrv4(), z.cidrv6(), z.ipv4(), z.ipv6()]))),
  ),
  /** Worker: port of the Temporal SDK's own Prometheus exporter (/metrics). Unset: not exported. */
  TEMPORAL_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /** Worker: port serving the service's own metrics (webhook deliveries, attempts, latency). Unset: not served. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /** API: port serving /metrics (HTTP by route and status), apart from the public PORT. Unset: not served. */
  METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /** Address the metrics ports (API and worker) bind to. */
  METRICS_HOST: z.string().default('127.0.0.1'),
  /**
   * A folder for per-hop timestamps of each webhook delivery (lib/runtime/hop-log.ts), written only while
   * a file named `on` is in it: the benchmark's per-hop breakdown. Unset (the default): nothing is
   * timed or written.
   */
  WEBHOOK_HOP_LOG_DIR: z.string().min(1).optional(),

  /**
   * Which payment processor adapter runs (payments/): the built-in sandbox, or Stripe. The sandbox
   * moves no money, so production refuses it (named or by default) unless
   * PAYMENTS_SANDBOX_IN_PRODUCTION is on.
   */
  PAYMENT_PROCESSOR: blankAsUnset(z.enum(['sandbox', 'stripe']).default('sandbox')),
  /**
   * Runs the sandbox processor in production knowingly (a demo, the production shape on one
   * machine): /ready reports it (`payments_sandbox`) and the console's header says so on every page.
   */
  PAYMENTS_SANDBOX_IN_PRODUCTION: blankAsUnset(bool.default(false)),
  /** HMAC secret the sandbox signs its notifications with. Unset: a fixed development secret, refused in production. */
  SANDBOX_NOTIFICATION_SECRET: blankAsUnset(z.string().min(32).optional()),
  /** Where the sandbox POSTs its notifications. Unset: PUBLIC_BASE_URL + /payments/sandbox/notifications. */
  SANDBOX_NOTIFICATION_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Set A collections: the sandbox reports succeeded and in_escrow this long after collecting, when auto-settle is on. */
  SANDBOX_AUTO_SETTLE: bool.default(true),
  SANDBOX_SETTLEMENT_DELAY_MS: z.coerce.number().int().min(0).max(86_400_000).default(1500),
  /** Stripe: secret API key, the webhook endpoint's signing secret, and a base URL override (stripe-mock). */
  // Empty counts as unset: compose passes `${STRIPE_SECRET_KEY:-}` when the sandbox runs instead.
  STRIPE_SECRET_KEY: blankAsUnset(z.string().startsWith('sk_').optional()),
  STRIPE_WEBHOOK_SECRET: blankAsUnset(z.string().startsWith('whsec_').optional()),
  STRIPE_API_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Deadline of each Stripe API call (the SDK retries network failures within it up to twice). */
  STRIPE_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),

  /**
   * Traces, the OpenTelemetry SDK's standard variables. Tracing is on only when
   * OTEL_TRACES_EXPORTER names an exporter (`otlp`, `zipkin`, `console`) or an OTLP endpoint is
   * named (then OTLP); unset, no SDK starts and nothing is instrumented. OTEL_TRACES_EXPORTER=none
   * or OTEL_SDK_DISABLED=true turn it off whatever else is set. `zipkin` posts to
   * OTEL_EXPORTER_ZIPKIN_ENDPOINT (the spec's default http://localhost:9411/api/v2/spans); that
   * endpoint without OTEL_TRACES_EXPORTER is refused (loadTracingConfig), as it selects nothing. The
   * exporters and sampler read their other OTEL_* variables (headers, timeout, OTEL_TRACES_SAMPLER)
   * themselves, as the SDK documents.
   */
  // Empty counts as unset, as the OpenTelemetry spec says (compose passes `${OTEL_TRACES_EXPORTER:-}`).
  OTEL_SDK_DISABLED: blankAsUnset(bool.default(false)),
  OTEL_TRACES_EXPORTER: blankAsUnset(z.enum(['otlp', 'zipkin', 'console', 'none']).optional()),
  OTEL_EXPORTER_OTLP_ENDPOINT: blankAsUnset(z.url({ protocol: /^https?$/ }).optional()),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: blankAsUnset(z.url({ protocol: /^https?$/ }).optional()),
  /** @readBy the Zipkin exporter, from the environment; validated here so a bad URL stops the start. */
  OTEL_EXPORTER_ZIPKIN_ENDPOINT: blankAsUnset(z.url({ protocol: /^https?$/ }).optional()),
  /** The `service.name` on every span; unset: `tranche-api` or `tranche-worker`. */
  OTEL_SERVICE_NAME: blankAsUnset(z.string().min(1).optional()),
  /**
   * Callers whose W3C `traceparent` (and `tracestate`) the API continues: addresses or CIDR ranges,
   * comma-separated, matched against the connection's peer (behind a proxy, the proxy: trust it only
   * if it removes its clients' trace headers). Unset: nobody; each request starts a trace of its
   * own and keeps the caller's context as a span link. Baggage is never taken nor passed on, and
   * OTEL_PROPAGATORS is not read (docs/decisions/0262-traces-trust-nobody.md).
   */
  TRACE_TRUSTED_CALLERS: blankAsUnset(z.string().default('').transform(parseAddressRanges)),

  /**
   * Retention (docs/decisions/0202-retention-what-is-kept.md), in days; 0 keeps forever. Events with their
   * webhook deliveries and attempts: only deliveries that ended (never a pending one or one waiting for a
   * retry), and an event once none of its deliveries is left. Pruned rows are gone from every list and the
   * events API.
   */
  RETENTION_EVENTS_DAYS: z.coerce.number().int().min(0).max(36_500).default(30),
  /** Processor payment notifications (their event ids deduplicate the processor's retries). */
  RETENTION_PAYMENT_NOTIFICATIONS_DAYS: z.coerce.number().int().min(0).max(36_500).default(90),
  /** How often the worker's Temporal Schedule runs the prune (expired Idempotency-Keys go with it). */
  RETENTION_PRUNE_INTERVAL_MINUTES: z.coerce.number().int().min(1).max(1440).default(10),
  /** Rows (events, deliveries, notifications or keys) one prune statement deletes at most; attempts go with their delivery. */
  RETENTION_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(250),
  /**
   * Short windows, in seconds, for a soak or a test (`npm run bench -- retention`): when set, each
   * replaces its days or minutes above. Production leaves them unset.
   */
  RETENTION_EVENTS_SECONDS: z.coerce.number().int().min(1).optional(),
  RETENTION_PAYMENT_NOTIFICATIONS_SECONDS: z.coerce.number().int().min(1).optional(),
  RETENTION_PRUNE_INTERVAL_SECONDS: z.coerce.number().int().min(5).max(86_400).optional(),
  /**
   * The keys audit entries are keyed with (HMAC-SHA256), kept out of the database so whoever holds
   * the database cannot recompute the chain: `<key id>:<base64 of 32 bytes>`, comma-separated, the
   * current key first; every key listed verifies the entries that name it (rotation: put a new key
   * first, keep the old ones). Required in production; `npm start` and the tests use a public
   * development key (scripts/lib/embedded-defaults.ts). docs/decisions/0266-audit-entries-keyed-with-hmac.md.
   */
  AUDIT_HMAC_KEYS: blankAsUnset(
    z
      .string()
      .optional()
      .transform((v, ctx) => (v === undefined ? undefined : parseKeyring(v, ctx))),
  ),
  /**
   * The keys investors' own data keys are wrapped under (AES-256-GCM), kept out of the database: `<key id>:<base64
   * of 32 bytes>`, comma-separated, the current key first; every key listed opens the data keys that name it
   * (rotation: put a new key first, keep the old ones). Personal fields are sealed under the investor's data key,
   * and erasing an investor deletes that key (docs/decisions/0313-erasure-by-crypto-shredding.md). Required in
   * production; `npm start` and the tests use a public development key (scripts/lib/embedded-defaults.ts).
   */
  PERSONAL_DATA_KEYS: blankAsUnset(
    z
      .string()
      .optional()
      .transform((v, ctx) => (v === undefined ? undefined : parseKeyring(v, ctx))),
  ),
  /**
   * How often the worker checkpoints each organisation's audit head (seq, hash) into the history
   * of a Temporal workflow, outside this database (docs/decisions/0267-audit-checkpoints-in-temporal.md).
   */
  AUDIT_CHECKPOINT_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(60).default(60),
});

export type Config = z.infer<typeof ConfigSchema>;

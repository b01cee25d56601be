import { z } from 'zod';
import { BEHAVIOUR_SETS } from '../../behaviour-set';
import { blankAsUnset, bool } from '../config-parsers';

/**
 * The process itself, its HTTP listener, its database and its Temporal connection. Part of ConfigSchema
 * (lib/runtime/config-schema.ts).
 */
export const serviceSettings = {
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
   * API and worker: how long a process that starts before its PostgreSQL or Temporal answers waits
   * for them, trying again with a growing pause and a warning every 10 s, before it exits naming the
   * one that stayed silent. A refusal (a wrong password, a rejected key) exits at once. 0: one try
   * (docs/decisions/0338-dependencies-awaited-at-start.md).
   */
  STARTUP_WAIT_SECONDS: z.coerce.number().int().min(0).max(3600).default(60),
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
  /**
   * Workflow tasks a worker runs at once; at most WORKER_MAX_CACHED_WORKFLOWS. Half of them may wait
   * on a local activity, which holds its task while it runs: in `workflow` shape a delivery's attempt
   * is one, so half bounds the worker's POSTs in flight, one organisation's at that less a twentieth
   * (docs/decisions/0334-workflow-shape-attempts-local.md).
   */
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: z.coerce.number().int().min(2).max(100_000).default(100),
  /**
   * Tests only (NODE_ENV=test; any other NODE_ENV refuses to start with it): a point where the worker
   * or API stops and waits to be killed, so a fault test strikes at a known moment. `refund-sent`: a
   * refund's activity has the processor's answer and has not returned it (test/faults/refund-crash.test.ts);
   * `capacity-held`: a create holds its capacity and has not started its workflow
   * (test/faults/stranded-hold.test.ts).
   */
  TEST_PAUSE_AT: z.enum(['refund-sent', 'capacity-held']).optional(),
};

import { z } from 'zod';
import { blankAsUnset, bool } from '../config-parsers';

/**
 * The API's limits on what it accepts, and whose forwarded addresses it believes. Part of ConfigSchema
 * (lib/runtime/config-schema.ts).
 */
export const apiSettings = {
  /** Largest JSON request body accepted, in kilobytes; a larger one is answered 413 PAYLOAD_TOO_LARGE. */
  BODY_LIMIT_KB: z.coerce.number().int().min(1).max(10_240).default(100),
  /** Writes (POST/PUT/PATCH/DELETE) allowed per window, counted per access-token subject, else per client address. */
  WRITE_RATE_LIMIT: z.coerce.number().int().min(1).default(120),
  WRITE_RATE_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  /**
   * Development and test only: each answer carries `Server-Timing` with the milliseconds its request spent in
   * each layer of the API path (auth, Idempotency-Key, personal data, publish, …), for the client benchmark
   * (lib/runtime/request-timing.ts, bench/client.ts). Production refuses it.
   */
  API_REQUEST_TIMING: bool.default(false),
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
};

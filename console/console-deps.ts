import type { Context } from 'koa';
import type { Knex } from '@mikro-orm/postgresql';
import type { Config } from '../lib/runtime/config';
import type { AppError } from '../lib/errors';
import type { KycEligibility } from '../domain/kyc';
import type { Principal } from '../domain/principal';
import type { AccessTokens } from '../identity';

/**
 * What the console is built from; the process that mounts it hands these over (server/app.ts).
 * Data and commands reach the console only through the JSON API over HTTP (api-client.ts,
 * docs/decisions/0100-console-same-api.md); these are the few things sign-in and error pages need
 * besides, passed in as functions so the console imports nothing of the API's insides
 * (docs/decisions/0330-rooms-and-walls.md).
 */
export interface ConsoleDeps {
  config: Config;
  knex: () => Knex;
  tokens: AccessTokens;
  kyc: KycEligibility;
  /** The status and code the JSON API would answer for this failure (503s name their dependency). */
  pageError(raw: unknown): Promise<AppError>;
  /** The audit entry of a console sign-in or sign-out, in the session record's transaction. */
  recordSession(
    trx: Knex.Transaction,
    ctx: Context,
    principal: Principal,
    action: 'console.sign_in' | 'console.sign_out',
  ): Promise<void>;
  /** The headers that name the person's address on the console's own API calls (decision 0273). */
  clientHeaders(address: string): Record<string, string>;
  /**
   * Seals what a page holds for one later page of the same person (a signing secret between a POST and the
   * page it redirects to): AES-256-GCM under a key the database does not hold, bound to `scope`.
   */
  secrets: { seal(scope: string, text: string): string; open(scope: string, sealed: string): string };
}

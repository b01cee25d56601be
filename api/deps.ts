import type { Client } from '@temporalio/client';
import type { Config } from '../lib/runtime/config';
import type { Orm } from '../db/orm';
import type { KycEligibility } from '../domain/kyc';
import type { AccessTokens } from '../identity';
import type { Warmth } from './warmth';

/** What the API is built from; main.ts builds the real ones, tests build the same real ones. */
export interface ApiDeps {
  config: Config;
  orm: Orm;
  temporal: Client;
  tokens: AccessTokens;
  kyc: KycEligibility;
  /**
   * The start-up warm-up server/main.ts runs (api/health/warm-up.ts): /ready answers 200 only once it
   * has. Absent (tests that build the app in-process), /ready does not wait for one.
   */
  warmth?: Warmth;
}

import type { Client } from '@temporalio/client';
import type { Config } from '../lib/config';
import type { Orm } from '../db/orm';
import type { KycEligibility } from '../domain/kyc';
import type { AccessTokens } from './identity/access-tokens';

/** What the API is built from; main.ts builds the real ones, tests build the same real ones. */
export interface ApiDeps {
  config: Config;
  orm: Orm;
  temporal: Client;
  tokens: AccessTokens;
  kyc: KycEligibility;
}

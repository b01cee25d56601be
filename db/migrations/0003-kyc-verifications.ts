import { Migration } from '@mikro-orm/migrations';

/**
 * The organisation-scoped KYC verification of each user: the one row the KYC gate reads
 * (spec §5.3). The identity side keeps it in step with its cases (Set A) or sessions (Set B).
 */
export class Migration0003KycVerifications extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table kyc_verifications (
        org_id uuid not null,
        user_id text not null,
        status text not null,
        updated_at timestamptz not null default now(),
        primary key (org_id, user_id)
      )`);
  }
}

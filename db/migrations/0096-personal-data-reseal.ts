import { Migration } from '@mikro-orm/migrations';

/**
 * Personal fields written in clear before they were sealed at the door
 * (docs/decisions/0384-resealing-fields-written-in-clear.md). SQL cannot seal them (the keys are not the
 * database's), so this step asks for it: `personal_data_reseals` holds one pending request, which the
 * first API process to see a warm worker takes (a lease) and runs in batches, as `npm run personal-data
 * -- reseal` does, and marks finished once nothing is left in clear. `personal_data_residues` lists the
 * subscriptions whose workflow history still holds what the old API handed it in clear: no reseal reaches
 * a history, and an erasure reports them until Temporal has removed it.
 */
export class Migration0096PersonalDataReseal extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table personal_data_reseals (
        id text primary key,
        requested_at timestamptz not null default now(),
        leased_until timestamptz,
        finished_at timestamptz,
        outcome jsonb
      )`);
    this.addSql(`insert into personal_data_reseals (id) values ('fields-written-in-clear')`);
    this.addSql(`
      create table personal_data_residues (
        subscription_id uuid primary key,
        org_id uuid not null,
        user_id text not null,
        noted_at timestamptz not null default now()
      )`);
    this.addSql('create index personal_data_residues_user_idx on personal_data_residues (org_id, user_id)');
  }
}

import { Migration } from '@mikro-orm/migrations';

/**
 * Identity: organisation API keys (hashes only), KYC records (Set A cases with attempts, Set B
 * sessions) and accreditations. Every record is scoped to (org_id, user_id); the KYC gate's row in
 * kyc_verifications is kept in step by the same transactions that change these.
 */
export class Migration0004Identity extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table identity_api_keys (
        id uuid primary key,
        org_id uuid not null,
        name text not null,
        secret_hash text not null unique,
        last_four char(4) not null,
        created_by text not null,
        created_at timestamptz not null,
        revoked_at timestamptz,
        last_used_at timestamptz
      )`);
    this.addSql('create index identity_api_keys_org_idx on identity_api_keys (org_id, created_at desc)');

    this.addSql(`
      create table kyc_cases (
        id uuid primary key,
        org_id uuid not null,
        user_id text not null,
        status text not null check (status in ('pending', 'approved', 'rejected', 'resubmission_requested')),
        current_attempt_id uuid,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        unique (org_id, user_id)
      )`);
    this.addSql(`
      create table kyc_attempts (
        id uuid primary key,
        case_id uuid not null references kyc_cases(id),
        status text not null check (status in ('pending', 'action_required', 'needs_review', 'approved', 'rejected')),
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`);
    this.addSql('create index kyc_attempts_case_idx on kyc_attempts (case_id, created_at)');

    this.addSql(`
      create table kyc_sessions (
        id uuid primary key,
        org_id uuid not null,
        user_id text not null,
        status text not null check (status in ('created', 'pii_submitted', 'processing', 'requires_review', 'approved', 'denied')),
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`);
    this.addSql('create index kyc_sessions_user_idx on kyc_sessions (org_id, user_id, created_at desc)');

    this.addSql(`
      create table accreditations (
        id uuid primary key,
        org_id uuid not null,
        user_id text not null,
        method text not null,
        status text not null check (status in ('created', 'submitted', 'more_info_needed', 'approved', 'denied')),
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`);
    this.addSql('create index accreditations_user_idx on accreditations (org_id, user_id, created_at desc)');
    this.addSql(`
      create table accreditation_documents (
        id uuid primary key,
        accreditation_id uuid not null references accreditations(id),
        file_name text not null,
        content_type text not null,
        sha256 char(64) not null,
        created_at timestamptz not null
      )`);
    this.addSql('create index accreditation_documents_idx on accreditation_documents (accreditation_id, created_at)');
  }
}

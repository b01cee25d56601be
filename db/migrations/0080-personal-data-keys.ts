import { Migration } from '@mikro-orm/migrations';

/**
 * Erasure by crypto-shredding (docs/decisions/0313-erasure-by-crypto-shredding.md): one data key per
 * investor (organisation and user id), stored wrapped under PERSONAL_DATA_KEYS, which the database
 * never holds; erasing deletes the row. The erasure itself is kept (no new key is made for an
 * erased investor), and so is a legal hold while it stands. The service role gets its row rights
 * on these tables from 0063's default privileges.
 */
export class Migration0080PersonalDataKeys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table personal_data_keys (
        id uuid primary key,
        org_id uuid not null,
        user_id text not null,
        wrapped_key text not null,
        created_at timestamptz not null default now(),
        unique (org_id, user_id)
      )`);
    this.addSql(`
      create table personal_data_erasures (
        org_id uuid not null,
        user_id text not null,
        erased_at timestamptz not null default now(),
        erased_by text not null,
        keys_destroyed integer not null,
        primary key (org_id, user_id)
      )`);
    this.addSql(`
      create table legal_holds (
        org_id uuid not null,
        user_id text not null,
        placed_at timestamptz not null default now(),
        placed_by text not null,
        reason text not null,
        primary key (org_id, user_id)
      )`);
  }
}

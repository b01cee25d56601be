import { Migration } from '@mikro-orm/migrations';

/**
 * Least privilege (docs/decisions/0265-database-roles-owner-and-service.md): the owner role that
 * runs migrations keeps DDL; the services connect as a login role that is a member of the group
 * role `tranche_service`, which may read and write rows and nothing else: no DDL, not an owner, so
 * it can neither disable a trigger nor drop a table. On `audit_events` it may only INSERT and
 * SELECT, so the append-only trigger (migration 0040) is a second wall, not the only one. Default
 * privileges give the group the same row rights on every table and sequence a later migration
 * creates; a later append-only table revokes what it must, as this one does.
 */
export class Migration0063ServiceRole extends Migration {
  override async up(): Promise<void> {
    // The group may exist already (made by an administrator beforehand, or by another database of
    // the same server); an owner without CREATEROLE is told the one statement to run.
    this.addSql(`
      do $$
      begin
        if not exists (select 1 from pg_roles where rolname = 'tranche_service') then
          begin
            create role tranche_service nologin;
          exception
            when duplicate_object then null;
            when insufficient_privilege then
              raise exception 'the group role tranche_service is missing and % may not create it', current_user
                using hint = 'as an administrator run: create role tranche_service nologin; (docs/decisions/0265-database-roles-owner-and-service.md)';
          end;
        end if;
      end $$`);
    this.addSql(`
      do $$
      declare s text := current_schema();
      begin
        execute format('grant usage on schema %I to tranche_service', s);
        execute format('grant select, insert, update, delete on all tables in schema %I to tranche_service', s);
        execute format('grant usage, select on all sequences in schema %I to tranche_service', s);
        execute format('alter default privileges in schema %I grant select, insert, update, delete on tables to tranche_service', s);
        execute format('alter default privileges in schema %I grant usage, select on sequences to tranche_service', s);
      end $$`);
    // The audit trail: written and read, never changed (migration 0040's trigger stays, behind this).
    this.addSql('revoke update, delete, truncate, references, trigger on audit_events from tranche_service');
    // The services only look whether a migration is pending (db/orm.ts); the owner applies it.
    this.addSql('revoke insert, update, delete, truncate on mikro_orm_migrations from tranche_service');
  }
}

import { Migration } from '@mikro-orm/migrations';

/**
 * Reads the operator console needs: when each subscription entered pending_review (the
 * review queue's order and waiting time), and a subscription's events found by its id.
 */
export class Migration0012Console extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table subscriptions add column review_since timestamptz');
    this.addSql(`update subscriptions set review_since = updated_at where status = 'pending_review'`);
    // A trigger rather than the projection activity: the workflow and its activities stay as they
    // are, and every writer of the row keeps the column right. updated_at is the workflow's time of
    // the change, so the queue's waiting time is the workflow's, not the projection's delay.
    this.addSql(`
      create function subscriptions_review_since() returns trigger language plpgsql as $$
      begin
        if new.status <> 'pending_review' then
          new.review_since := null;
        elsif tg_op = 'INSERT' or old.status is distinct from 'pending_review' then
          new.review_since := new.updated_at;
        end if;
        return new;
      end $$`);
    this.addSql(`
      create trigger subscriptions_review_since before insert or update on subscriptions
      for each row execute function subscriptions_review_since()`);
    this.addSql(
      `create index subscriptions_review_queue_idx on subscriptions (org_id, review_since, id) where status = 'pending_review'`,
    );
    // subscription.* events carry the subscription as data (its id in data.id); shares.issued names it in data.subscription_id.
    this.addSql(
      `create index events_subscription_idx on events (org_id, (coalesce(data->>'subscription_id', data->>'id')), seq)`,
    );
  }
}

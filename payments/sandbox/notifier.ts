import { randomUUID } from 'node:crypto';
import type { Orm } from '../../db/orm';
import { SandboxEventSchema } from '../../db/entities/payment-sandbox';
import { logger } from '../../lib/runtime/logger';
import type { SandboxEventData, SandboxEventType } from './sandbox-events';
import { SANDBOX_SIGNATURE_HEADER, signSandboxBody } from './signature';
import { cutToCodePoints } from '../../lib/text';

const DELIVERY_TIMEOUT_MS = 10_000;
/** Waits before each retry; after the last the event stays undelivered and `redeliver()` picks it up. */
const RETRY_DELAYS_MS = [500, 2_000, 10_000, 30_000];

/**
 * The sandbox's outgoing notifications, sent as a processor sends them: stored first (so none is
 * lost to a crash), then an HTTP POST of the exact stored body, signed, to the service's endpoint,
 * retried on failure. The first attempt is awaited so a redirect usually lands after it.
 */
export class SandboxNotifier {
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly orm: Orm,
    private readonly url: string,
    private readonly secret: string,
  ) {}

  async emit(type: SandboxEventType, data: SandboxEventData): Promise<string> {
    const id = `evt_sbx_${randomUUID().replace(/-/g, '')}`;
    const createdAt = new Date();
    const body = JSON.stringify({ id, type, created: createdAt.toISOString(), data });
    await this.orm.em
      .fork()
      .insert(SandboxEventSchema, { id, type, body, createdAt, attempts: 0, deliveredAt: null, lastError: null });
    await this.deliver(id, body, 0);
    return id;
  }

  /**
   * Sends every stored event not yet delivered about a subscription of the organisation (an
   * operator's nudge after an outage; an operator sees only their own organisation's payments).
   */
  async redeliver(scope: { orgId: string }): Promise<number> {
    const pending = (await this.orm.em.getConnection().execute(
      `select e.id, e.body from payment_sandbox_events e
        where e.delivered_at is null
          and exists (select 1 from subscriptions s
                       where s.org_id = ? and s.id::text = e.body::jsonb -> 'data' ->> 'subscription_id')
        order by e.created_at limit 500`,
      [scope.orgId],
    )) as { id: string; body: string }[];
    for (const e of pending) await this.deliver(e.id, e.body, RETRY_DELAYS_MS.length);
    return pending.length;
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private async deliver(id: string, body: string, attempt: number): Promise<void> {
    if (this.closed) return;
    let error: string | null = null;
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [SANDBOX_SIGNATURE_HEADER]: signSandboxBody(this.secret, body),
          'user-agent': 'Tranche-Sandbox/1.0',
        },
        body,
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      });
      await res.arrayBuffer();
      if (!res.ok) error = `HTTP ${res.status}`;
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    if (this.closed) return;
    const em = this.orm.em.fork();
    const attempts = { attempts: attempt + 1 };
    if (!error) {
      await em.nativeUpdate(SandboxEventSchema, { id }, { ...attempts, deliveredAt: new Date(), lastError: null });
      return;
    }
    await em.nativeUpdate(SandboxEventSchema, { id }, { ...attempts, lastError: cutToCodePoints(error, 500) });
    const delay = RETRY_DELAYS_MS[attempt];
    logger.warn(
      { eventId: id, attempt: attempt + 1, error, retryInMs: delay ?? null },
      'sandbox notification not delivered',
    );
    if (delay === undefined) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.deliver(id, body, attempt + 1).catch((err) =>
        logger.warn({ err, eventId: id }, 'sandbox redelivery failed'),
      );
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }
}

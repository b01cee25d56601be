import Router from '@koa/router';
import { z, ZodError } from 'zod';
import { badRequest } from '../../lib/errors';
import { logger } from '../../lib/runtime/logger';
import { notificationSources } from '../../payments';
import { SignatureError, type NotificationSource } from '../../payments';
import type { ApiDeps } from '../deps';
import { subscriptionClient } from '../issuance/subscription-client';
import { projectionOf } from '../issuance/subscription-reads';
import { notificationIntake } from './notification-intake';
import { validate } from '../middleware/validate';
import { ok } from '../respond';

const NotificationReceipt = z
  .object({ received: z.literal(true), event_id: z.string(), outcome: z.enum(['signalled', 'ignored', 'duplicate']) })
  .meta({ id: 'NotificationReceipt' });

/**
 * POST /payments/{processor}/notifications, one per processor this deployment answers. The
 * signature is checked over the raw body before anything else; a forged or unreadable request is
 * 400 and changes nothing. Unknown event types are acknowledged (200) so the processor stops.
 */
export function paymentNotificationsRouter(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/payments' });
  const take = notificationIntake(deps.orm, subscriptionClient(deps.temporal, deps.config, projectionOf(deps.orm)));

  const route = (source: NotificationSource) =>
    router.post(
      `/${source.processor}/notifications`,
      validate(
        { response: NotificationReceipt, summary: `Receive a signed ${source.processor} payment notification` },
        async (ctx) => {
          const raw = (ctx.request as { rawBody?: string }).rawBody;
          if (typeof raw !== 'string' || raw.length === 0)
            throw badRequest('NOTIFICATION_UNREADABLE', 'Send the notification as application/json');
          let event;
          try {
            event = await source.read(raw, (name) => ctx.get(name));
          } catch (err) {
            if (err instanceof SignatureError) {
              logger.warn(
                { processor: source.processor, requestId: (ctx.state as { requestId?: string }).requestId },
                'payment notification with a bad signature refused',
              );
              throw badRequest('SIGNATURE_INVALID', 'The notification signature does not verify');
            }
            if (err instanceof ZodError || err instanceof SyntaxError)
              throw badRequest('NOTIFICATION_UNREADABLE', 'The notification body is not a recognised event');
            throw err;
          }
          const outcome = await take(source.processor, event, {
            requestId: (ctx.state as { requestId?: string }).requestId ?? null,
            // Koa's ctx.ip, as TRUST_PROXY decides (server/app.ts), like every other audit entry.
            clientAddress: ctx.ip || null,
          });
          ok(ctx, { received: true, event_id: event.id, outcome });
        },
      ),
    );

  for (const source of notificationSources(deps.config, deps.orm)) route(source);
  return router;
}

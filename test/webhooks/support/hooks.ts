import { http } from '../../support/http';
import type { TestService } from '../../support/service';
import type { Actor } from '../../support/fixtures';
import type { HookPlan, Receiver } from './receiver';

export const PATHS = {
  A: { endpoints: '/notifications/webhook-endpoints', deliveries: '/notifications/webhook-deliveries' },
  B: { endpoints: '/notifications/webhooks', deliveries: '/notifications/deliveries' },
} as const;

/** Registers an endpoint pointing at the receiver's hook and tells the receiver its secret. */
export async function registerHook(
  svc: TestService,
  receiver: Receiver,
  who: Actor,
  hook: string,
  eventTypes: string[],
  plan: Omit<HookPlan, 'secret'> = {},
): Promise<{ id: string; secret: string }> {
  const res = await http(svc.baseUrl).post(PATHS[svc.set].endpoints, who.token, {
    url: receiver.url(hook),
    description: hook,
    eventTypes,
  });
  if (res.status !== 201) throw new Error(`register ${hook}: ${res.status} ${JSON.stringify(res.body)}`);
  await receiver.plan(hook, { ...plan, secret: res.body.data.signing_secret });
  return { id: res.body.data.id, secret: res.body.data.signing_secret };
}

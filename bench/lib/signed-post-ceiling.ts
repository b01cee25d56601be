import { createHmac, randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';

/**
 * Plain signed POSTs, no durability: what the machine can do at all, with the HTTP client and pool
 * size the engine uses (undici `request`, 128 connections), so the two figures compare.
 */
export async function signedPostCeiling(sink: {
  url: string;
  register(hook: string, secret: string): Promise<void>;
}): Promise<number> {
  const hook = 'ceiling';
  const secret = 'whsec_ceiling';
  await sink.register(hook, secret);
  const sinkUrl = sink.url;
  const body = JSON.stringify({
    event_id: randomUUID(),
    event_type: 'subscription.approved',
    data: { id: randomUUID() },
  });
  const dispatcher = new Agent({ connections: 128 });
  let n = 0;
  const until = Date.now() + 5000;
  try {
    await Promise.all(
      Array.from({ length: 128 }, async () => {
        while (Date.now() < until) {
          const sig = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
          const res = await request(`${sinkUrl}/h/${hook}`, {
            method: 'POST',
            body,
            dispatcher,
            headers: {
              'content-type': 'application/json',
              'x-service-signature': sig,
              'x-service-event-id': randomUUID(),
              'x-service-delivery-id': randomUUID(),
            },
          });
          await res.body.dump();
          if (res.statusCode === 200) n++;
        }
      }),
    );
  } finally {
    await dispatcher.close();
  }
  return Math.round(n / 5);
}

import type { Middleware } from 'koa';
import type { Orm } from '../../db/orm';
import type { Config } from '../../lib/runtime/config';
import { openSealed, personalKeysOf } from './sealing';
import { timed } from '../../lib/runtime/request-timing';

/**
 * Every JSON answer shows personal fields in clear, or the erased marker once their investor's key
 * was destroyed (docs/decisions/0313-erasure-by-crypto-shredding.md). Stored data keeps them sealed;
 * they are opened here, on the way out, and nowhere else in the API. Mounted outside the
 * Idempotency-Key store, so a kept answer is kept sealed and a replay after an erasure shows the marker.
 */
export function openPersonalData(deps: { orm: Orm; config: Pick<Config, 'PERSONAL_DATA_KEYS'> }): Middleware {
  const keys = personalKeysOf(deps);
  return async (ctx, next) => {
    await next();
    const body: unknown = ctx.body;
    if (body === null || typeof body !== 'object' || Buffer.isBuffer(body) || 'pipe' in body) return;
    // Opened for the caller's organisation only: a value sealed under another's key reads as unreadable.
    const orgId = (ctx.state as { principal?: { orgId: string } }).principal?.orgId ?? null;
    const opened = await timed('personal', () => openSealed(keys, orgId, body));
    if (opened !== body) ctx.body = opened;
  };
}

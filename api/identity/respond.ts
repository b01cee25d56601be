import type { Context } from 'koa';

/** The success envelope (spec §1). */
export const ok = (ctx: Context, data: unknown, status = 200) => {
  ctx.status = status;
  ctx.body = { success: true, data };
};

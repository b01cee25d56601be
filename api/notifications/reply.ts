import type { Ctx } from '../middleware/validate';

/** The success envelope (spec §1). */
export const ok = (ctx: Ctx, data: unknown, status = 200) => {
  ctx.status = status;
  ctx.body = { success: true, data };
};

import type { AttentionPage } from './api-types';
import { need, type ConsoleKit, type ConsoleRouter } from './console-kit';
import { attentionBody } from './views/attention-view';

/** Staff's list of subscriptions whose last step failed, read through the JSON API like every console page. */
export function attentionPages(router: ConsoleRouter, kit: ConsoleKit): void {
  const { page, session } = kit;
  router.get('/attention', session, async (ctx) => {
    const cursor = typeof ctx.query.cursor === 'string' ? `&cursor=${encodeURIComponent(ctx.query.cursor)}` : '';
    const list = need(await ctx.state.api.get<AttentionPage>(`/issuance/attention?limit=100${cursor}`), 'attention');
    page(ctx, 200, 'Needs attention', 'attention', attentionBody(list));
  });
}

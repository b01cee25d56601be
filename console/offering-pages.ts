import type { OfferingList } from './api-types';
import { need, type ConsoleKit, type ConsoleRouter } from './console-kit';
import { offeringsBody } from './views/offerings-view';

/** Staff's view of offerings and their capacity, read through the JSON API like every console page. */
export function offeringPages(router: ConsoleRouter, kit: ConsoleKit): void {
  const { page, session } = kit;
  router.get('/offerings', session, async (ctx) => {
    const cursor = typeof ctx.query.cursor === 'string' ? `&cursor=${encodeURIComponent(ctx.query.cursor)}` : '';
    const list = need(await ctx.state.api.get<OfferingList>(`/issuance/offerings?limit=100${cursor}`), 'offerings');
    page(ctx, 200, 'Offerings', 'offerings', offeringsBody(list));
  });
}

import type { Offering, OfferingList, SubscriptionList } from './api-types';
import { need, uuid, type ConsoleKit, type ConsoleRouter } from './console-kit';
import { holdsBody } from './views/holds-view';
import { offeringsBody } from './views/offerings-view';

/** The states before review, where a subscription holds capacity with no decision made on it yet. */
const BEFORE_REVIEW = ['draft', 'pending_signature', 'pending_payment'];

/** Staff's view of offerings and their capacity, read through the JSON API like every console page. */
export function offeringPages(router: ConsoleRouter, kit: ConsoleKit): void {
  const { page, session } = kit;
  router.get('/offerings', session, async (ctx) => {
    const cursor = typeof ctx.query.cursor === 'string' ? `&cursor=${encodeURIComponent(ctx.query.cursor)}` : '';
    const list = need(await ctx.state.api.get<OfferingList>(`/issuance/offerings?limit=100${cursor}`), 'offerings');
    page(ctx, 200, 'Offerings', 'offerings', offeringsBody(list));
  });

  // What holds an offering's capacity before review, for staff to follow up or cancel (decision 0369).
  router.get('/offerings/:id/holds', session, async (ctx) => {
    const id = uuid(ctx.params.id);
    const offering = need(await ctx.state.api.get<Offering>(`/issuance/offerings/${id}`), 'the offering');
    const lists = await Promise.all(
      BEFORE_REVIEW.map(async (status) =>
        need(
          await ctx.state.api.get<SubscriptionList>(
            `/issuance/subscriptions?offering_id=${id}&status=${status}&limit=100`,
          ),
          'subscriptions',
        ),
      ),
    );
    const held = lists.flatMap((l) => l.items).sort((a, b) => a.created_at.localeCompare(b.created_at));
    page(ctx, 200, offering.name, 'offerings', holdsBody(offering, held));
  });
}

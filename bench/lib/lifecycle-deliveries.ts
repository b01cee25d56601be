import type { PhaseContext } from './phase-context';
import { receivedExactly } from './owed';

const round = (n: number) => Math.round(n * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until every delivery the lifecycles' events owe has arrived once and been recorded a success,
 * so the next phase starts on a server with none of them left (docs/decisions/0355-visibility-read-twice-a-second.md).
 * The deliveries' rows are the debt: the subscription workflows publish the last events after the last
 * command's answer, so the debt counts as paid when the receipts and records meet it and it has not grown
 * a second later.
 */
export async function lifecycleDeliveries(ctx: PhaseContext, orgId: string) {
  const t0 = Date.now();
  const deadline = t0 + Math.max(60, ctx.seconds(600)) * 1000;
  const debt = async () => {
    const [row] = await ctx
      .knex('webhook_deliveries')
      .where({ org_id: orgId })
      .select(ctx.knex.raw(`count(*)::int as owed, (count(*) filter (where status = 'success'))::int as recorded`));
    const { received } = await ctx.sink.receipts([orgId]);
    return { ...(row as { owed: number; recorded: number }), received };
  };
  let now = await debt();
  let [metAt, metOwed] = [0, -1];
  while (Date.now() < deadline) {
    if (now.received !== now.owed || now.recorded !== now.owed) [metAt, metOwed] = [0, -1];
    else if (now.owed === metOwed) break;
    else [metAt, metOwed] = [Date.now(), now.owed];
    await sleep(metAt ? 1000 : 200);
    now = await debt();
  }
  await receivedExactly(ctx, 'lifecycles', [orgId], now.owed, 1);
  if (now.recorded !== now.owed) ctx.fail(`lifecycles: ${now.recorded} of ${now.owed} deliveries recorded`);
  return { deliveries: now.owed, delivered_s_after_last_command: round(((metAt || Date.now()) - t0) / 1000) };
}

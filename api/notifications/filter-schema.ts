import { z } from 'zod';
import { filterRefusals, type PayloadFilter } from '../../webhooks';

/**
 * An endpoint's payload filter as given (docs/decisions/0398-payload-filters.md; its meaning and its checks:
 * webhooks/endpoints/payload-filter.ts): each thing wrong refused 422 where it is, e.g. `filter.all.1.path`.
 */
export const PayloadFilterInput = z
  .unknown()
  .superRefine((value, ctx) => {
    for (const r of filterRefusals(value)) ctx.addIssue({ code: 'custom', path: r.path, message: r.message });
  })
  .transform((value) => value as PayloadFilter)
  .meta({
    description:
      "Deliver only events whose data matches: {path, eq: value} | {path, in: [values]} | {path, exists: true|false} | {all: [filters]} | {any: [filters]}; a path names keys within the event's data joined by dots (amount.currency). At most 4 deep and 20 conditions. Test pings and catalog examples are not filtered",
    examples: [
      {
        all: [
          { path: 'amount.currency', eq: 'USD' },
          { path: 'status', in: ['approved', 'funded'] },
        ],
      },
    ],
  });

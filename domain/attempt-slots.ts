/**
 * How a worker's slots are shared between organisations' POSTs.
 *
 * The reserve: the last slots of a process, a twentieth of them and at least one, go only to an
 * organisation holding fewer than that many, so one tenant's slow POSTs never take the last slot
 * another needs (docs/decisions/0309-slots-taken-at-the-post.md).
 */
export const reserveOf = (slots: number): number => Math.max(1, Math.ceil(slots / 20));

/**
 * `workflow` shape (docs/decisions/0334-workflow-shape-attempts-local.md): an attempt is a local
 * activity, which holds its workflow task while its POST runs. Half of a worker's workflow task
 * slots may wait on one; the rest stay for the worker's pollers and for workflows not waiting on
 * a POST, so a delivery of another organisation is always picked up.
 */
export const attemptSlotsOf = (workflowTaskSlots: number): number => Math.max(1, Math.floor(workflowTaskSlots / 2));

/** `workflow` shape: the most attempts one organisation holds in flight, the attempt slots less the reserve. */
export const orgShareOf = (workflowTaskSlots: number): number => {
  const slots = attemptSlotsOf(workflowTaskSlots);
  return Math.max(1, slots - reserveOf(slots));
};

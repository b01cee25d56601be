import { slotWaiters } from '../../webhooks/attempts/slot-waiters';

/** The held deliveries' lists (docs/decisions/0337-held-attempts-woken.md): a freed slot goes to the oldest. */
describe("a worker's deliveries held for a slot", () => {
  it("wakes the endpoint's oldest waiter first, then its organisation's, and each once", () => {
    const waiters = slotWaiters();
    waiters.hold('d1', 'e1', 'o1');
    waiters.hold('d2', 'e2', 'o1');
    waiters.hold('d3', 'e1', 'o1');
    waiters.hold('d4', 'e3', 'o2');
    expect(waiters.next('e1', 'o1')).toBe('d1');
    expect(waiters.next('e1', 'o1')).toBe('d3');
    // No waiter of e1 left: the organisation's oldest has the slot its organisation's share freed.
    expect(waiters.next('e1', 'o1')).toBe('d2');
    expect(waiters.next('e1', 'o1')).toBeUndefined();
    // Another organisation's waiter is never handed a slot o1 freed.
    expect(waiters.next('e9', 'o2')).toBe('d4');
  });

  it('forgets a waiter that asks again on its own, and puts one held again at the back', () => {
    const waiters = slotWaiters();
    waiters.hold('d1', 'e1', 'o1');
    waiters.hold('d2', 'e1', 'o1');
    waiters.hold('d3', 'e1', 'o1');
    waiters.leave('d2'); // its timer came first
    waiters.hold('d1', 'e1', 'o1'); // asked again and was held again
    expect([waiters.next('e1', 'o1'), waiters.next('e1', 'o1'), waiters.next('e1', 'o1')]).toEqual([
      'd3',
      'd1',
      undefined,
    ]);
  });
});

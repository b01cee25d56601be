/**
 * How long a started delivery counts against its endpoint's room when this process never sees its
 * first attempt claimed: its first task went to another worker, or its run ended some other way.
 */
const FORGET_AFTER_MS = 60_000;
/** Started deliveries a process remembers at most; past it, the oldest is forgotten. */
const MAX_REMEMBERED = 50_000;

/**
 * `workflow` shape: the deliveries whose workflows this process started, or whose first attempt it
 * throttled, by endpoint (docs/decisions/0340-workflow-starts-within-the-endpoints-room.md). The
 * database counts an attempt once it is claimed; until then only this process knows the run is on its
 * way, so the start path counts these against the endpoint's room too. Its statement leaves out
 * every one that has an attempt row by then, claimed here or by another worker, so an entry kept
 * after its claim costs nothing but its memory.
 */
export function unclaimedStarts() {
  const started = new Map<string, { endpointId: string; at: number }>();

  const forgetOld = () => {
    const before = Date.now() - FORGET_AFTER_MS;
    // Oldest first: stop at the first one still recent.
    for (const [deliveryId, s] of started) {
      if (s.at >= before && started.size <= MAX_REMEMBERED) break;
      started.delete(deliveryId);
    }
  };

  return {
    /** The delivery's workflow is started, or its first attempt throttled: it counts against its endpoint. */
    add(deliveryId: string, endpointId: string): void {
      started.delete(deliveryId);
      started.set(deliveryId, { endpointId, at: Date.now() });
    },
    /** Its first attempt is claimed here, or its start failed: forgotten. */
    claimed(deliveryId: string): void {
      started.delete(deliveryId);
    },
    /** Every one remembered, as the start path's statement reads them. */
    entries(): { delivery_id: string; endpoint_id: string }[] {
      forgetOld();
      return [...started].map(([delivery_id, { endpointId }]) => ({ delivery_id, endpoint_id: endpointId }));
    },
  };
}

export type UnclaimedStarts = ReturnType<typeof unclaimedStarts>;

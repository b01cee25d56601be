/**
 * Hands freshly stored events to the webhook fan-out right away. It is only the fast path: the
 * outbox relay dispatches anything this misses (a crash between commit and dispatch loses nothing).
 */
export interface EventDispatcher {
  dispatch(eventIds: readonly string[]): Promise<void>;
}

export const relayOnlyDispatcher: EventDispatcher = { dispatch: async () => undefined };

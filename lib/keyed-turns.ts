/**
 * Turns per key: a call runs once every earlier call with the same key has settled, and calls with
 * other keys never wait for it. Whatever a waiting call would hold while it waits (a pooled
 * connection blocked on a row lock, say) it does not take until its turn.
 */
export function keyedTurns(): <T>(key: string, run: () => Promise<T>) => Promise<T> {
  const last = new Map<string, Promise<void>>();
  return (key, run) => {
    const result = (last.get(key) ?? Promise.resolve()).then(run);
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    last.set(key, settled);
    void settled.then(() => {
      if (last.get(key) === settled) last.delete(key);
    });
    return result;
  };
}

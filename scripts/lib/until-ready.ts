/**
 * Waits until `url` answers 2xx: a try every 250 ms, each at most 2 s, for `withinMs` in all.
 * `exited`, asked before each try, names a process that has stopped (or returns null); the wait then
 * fails at once rather than running out its time.
 */
export async function untilReady(url: string, opts: { withinMs: number; exited?: () => string | null }): Promise<void> {
  const deadline = Date.now() + opts.withinMs;
  while (Date.now() < deadline) {
    const gone = opts.exited?.();
    if (gone) throw new Error(gone);
    const ok = await fetch(url, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`it did not answer ready within ${Math.round(opts.withinMs / 1000)} s`);
}

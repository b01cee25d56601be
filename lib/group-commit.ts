/**
 * Group commit: callers that arrive while a run is in flight wait, and go together in the next
 * run, so one statement serves many callers under load and a lone caller waits for nothing. Runs
 * never overlap. `run` answers one result per input, in order; when it throws, each caller of that
 * run gets the error.
 */
export function groupCommit<I, O>(
  run: (inputs: I[]) => Promise<O[]>,
  opts: { maxBatch: number; onIdle?: () => void },
): (input: I) => Promise<O> {
  let waiting: { input: I; resolve: (o: O) => void; reject: (err: unknown) => void }[] = [];
  let running = false;

  async function drain(): Promise<void> {
    while (waiting.length > 0) {
      const batch = waiting.slice(0, opts.maxBatch);
      waiting = waiting.slice(batch.length);
      try {
        const outputs = await run(batch.map((w) => w.input));
        batch.forEach((w, i) => w.resolve(outputs[i]!));
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    running = false;
    opts.onIdle?.();
  }

  return (input) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ input, resolve, reject });
      if (running) return;
      // Started after this tick's other callers have joined, so they share the first run.
      running = true;
      queueMicrotask(() => void drain());
    });
}

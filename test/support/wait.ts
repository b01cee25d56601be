/**
 * The one way a test waits: on something it can observe, never on a fixed sleep.
 * `eventually` retries a check until it stops throwing (an `expect` inside it is the usual check);
 * `until` reads a value until a predicate holds. Both give up after `timeoutMs` with what was awaited
 * and the last error or value seen.
 */
export interface WaitOptions {
  /** How long to keep trying (ms). */
  timeoutMs?: number;
  /** The pause between tries (ms). */
  intervalMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_INTERVAL_MS = 100;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Retries `check` until it resolves without throwing; returns its value. */
export async function eventually<T>(what: string, check: () => T | Promise<T>, options: WaitOptions = {}): Promise<T> {
  const { timeoutMs = DEFAULT_TIMEOUT_MS, intervalMs = DEFAULT_INTERVAL_MS } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() >= deadline) {
        const last = err instanceof Error ? err.message : String(err);
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last error: ${last}`);
      }
    }
    await pause(intervalMs);
  }
}

/**
 * Reads until `done` holds for what was read (by default: anything but undefined, null or false);
 * returns that value. An error from `read` ends the wait at once.
 */
export async function until<T>(
  what: string,
  read: () => T | Promise<T>,
  options?: WaitOptions,
): Promise<Exclude<T, undefined | null | false>>;
export async function until<T>(
  what: string,
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  options?: WaitOptions,
): Promise<T>;
export async function until<T>(
  what: string,
  read: () => T | Promise<T>,
  doneOrOptions?: ((value: T) => boolean) | WaitOptions,
  maybeOptions: WaitOptions = {},
): Promise<unknown> {
  const done: (value: T) => boolean = typeof doneOrOptions === 'function' ? doneOrOptions : present;
  const options = typeof doneOrOptions === 'function' ? maybeOptions : (doneOrOptions ?? {});
  const { timeoutMs = DEFAULT_TIMEOUT_MS, intervalMs = DEFAULT_INTERVAL_MS } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() >= deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last value: ${describe(value)}`);
    }
    await pause(intervalMs);
  }
}

const present = (value: unknown) => value !== undefined && value !== null && value !== false;

function describe(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
  } catch {
    return String(value);
  }
}

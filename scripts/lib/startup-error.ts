/**
 * A failure of `npm start` or `npm run cluster` told so a person can act on it: which part failed
 * (and on which port), what went wrong, what to do, and where that part's log is.
 */
export class StartupError extends Error {
  readonly part: string;
  readonly problem: string;
  readonly remedy: string;
  readonly log?: string;

  constructor(opts: { part: string; problem: string; remedy: string; log?: string; cause?: unknown }) {
    super(`${opts.part}: ${opts.problem}`, { cause: opts.cause });
    this.name = 'StartupError';
    this.part = opts.part;
    this.problem = opts.problem;
    this.remedy = opts.remedy;
    this.log = opts.log;
  }
}

/**
 * Runs one part's start; whatever it throws (an Error, a library's bare `reject()`, anything) comes
 * out as a StartupError naming the part, with its log file and a remedy.
 */
export async function startingPart<T>(
  part: { part: string; remedy: string; log?: string },
  start: () => Promise<T>,
): Promise<T> {
  try {
    return await start();
  } catch (err) {
    if (err instanceof StartupError) throw err;
    throw new StartupError({ ...part, problem: describe(err), cause: err });
  }
}

/** The lines `[start] …` / `[cluster] …` print when starting fails. */
export function explainStartupFailure(prefix: string, err: unknown): string {
  if (err instanceof StartupError) {
    return [
      `${prefix} failed: ${err.part}`,
      `${prefix}   what happened: ${err.problem}`,
      `${prefix}   what to do:    ${err.remedy}`,
      ...(err.log ? [`${prefix}   its log:       ${err.log}`] : []),
    ].join('\n');
  }
  return `${prefix} failed: ${describe(err)}${err instanceof Error && err.stack ? `\n${err.stack}` : ''}`;
}

/** A readable sentence for any thrown value; never the word `undefined`. */
function describe(err: unknown): string {
  if (err instanceof Error) {
    const inner = err instanceof AggregateError ? err.errors.map(describe).join('; ') : '';
    return err.message || inner || err.name;
  }
  if (err === undefined || err === null) return 'it stopped without saying why';
  return String(err);
}

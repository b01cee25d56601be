/**
 * How a worker process is launched, wherever it is (npm start, npm run cluster, the benchmarks;
 * temporal-compose.yml says the same in its own syntax). Measured in the
 * webhook benchmark (docs/decisions/0149-worker-memory.md): without these a worker's RSS rose to
 * 708 MiB with 2,000 retries waiting, while its live heap stayed under 100 MiB. V8 let garbage
 * pile up to ~300 MiB on a machine with memory to spare, and glibc kept a malloc arena per thread
 * of the SDK core. With them: 405 MiB, and no slower.
 */
export const WORKER_NODE_ARGS = ['--max-old-space-size=256'];
export const WORKER_ENV = { MALLOC_ARENA_MAX: '2' } as const;

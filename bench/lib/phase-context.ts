import type { Client } from '@temporalio/client';
import type { Knex } from '@mikro-orm/postgresql';
import type { ServiceProcesses } from './service-processes';
import type { Sink } from './sink';
import type { apiSession } from './api-session';

/** What every phase runs against: one stack, one sink, the public API and the in-process publisher. */
export interface PhaseContext {
  sink: Sink;
  api: Awaited<ReturnType<typeof apiSession>>;
  knex: Knex;
  temporal: Client;
  svc: ServiceProcesses;
  databaseUrl: string;
  /**
   * The delivery shape under test. The `workflow` shape's phases are sized to what a workflow per
   * delivery can carry on this server, so each drains in minutes, not hours (bench/webhooks.ts).
   */
  shape: 'engine' | 'workflow';
  /** The folder the processes write per-hop timestamps to while `<hopDir>/on` exists (lib/runtime/hop-log.ts). */
  hopDir: string;
  /** Phase lengths and counts, shortened by BENCH_SCALE. */
  seconds(s: number): number;
  count(n: number): number;
  /** Records a phase that received other than it owed. */
  fail(message: string): void;
}

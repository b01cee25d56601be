import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { until } from '../../support/wait';

export interface ReceivedDelivery {
  at: number;
  headers: Record<string, string>;
  body: string;
  verified: boolean;
  status: number;
  /** The hook's requests open when this one arrived, itself included. */
  concurrent: number;
}

export type PlannedAnswer = number | { status: number; headers?: Record<string, string> };

export interface HookPlan {
  secret: string;
  /** Statuses (or statuses with headers) to answer with, in order; then defaultStatus. */
  responses?: PlannedAnswer[];
  defaultStatus?: PlannedAnswer;
  /** Bodies containing any of these strings are answered 500, whatever their turn. */
  refuse?: string[];
  delayMs?: number;
}

/** The consumer process of consumer-process.mjs and a client for its control API. */
export class Receiver {
  private constructor(
    private readonly child: ChildProcess,
    readonly base: string,
  ) {}

  static async start(): Promise<Receiver> {
    const child = spawn(process.execPath, [join(__dirname, 'consumer-process.mjs')], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`receiver exited (${code})`)));
      setTimeout(() => reject(new Error('receiver did not start in 10 s')), 10_000).unref();
    });
    return new Receiver(child, `http://127.0.0.1:${JSON.parse(line).port}`);
  }

  url(hook: string): string {
    return `${this.base}/hooks/${hook}`;
  }

  async plan(hook: string, plan: HookPlan): Promise<void> {
    const res = await fetch(`${this.base}/_control/${hook}`, {
      method: 'PUT',
      body: JSON.stringify(plan),
      signal: AbortSignal.timeout(5000),
    });
    if (!res.ok) throw new Error(`receiver plan: ${res.status}`);
  }

  async received(hook: string): Promise<ReceivedDelivery[]> {
    const res = await fetch(`${this.base}/_control/${hook}`, { signal: AbortSignal.timeout(5000) });
    return res.json() as Promise<ReceivedDelivery[]>;
  }

  /** Waits until the hook has received at least `count` requests. */
  async waitFor(hook: string, count: number, timeoutMs = 30_000): Promise<ReceivedDelivery[]> {
    return until(
      `${count} deliveries to hook ${hook}`,
      () => this.received(hook),
      (got) => got.length >= count,
      { timeoutMs },
    );
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    await new Promise((resolve) => {
      this.child.once('exit', resolve);
      this.child.kill('SIGTERM');
    });
  }
}

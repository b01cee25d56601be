import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg, setPriority } from 'node:os';

/**
 * What the host was doing while a system was measured: CPU steal (another guest's use of this machine's
 * cores) and load, the processor, and the CPU each process of the system used. Hosts here have bursts of
 * steal, so every run and phase records them beside its figures (docs/decisions/0394-client-compare-alternates-runs.md).
 */

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The processor, once: the same bench on another model is another machine. */
export const machine = () => ({ cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version });

/** `vmstat 1 2`'s second line (the last second, not the averages since boot): steal, idle and the run queue. */
export function vmstat(): { st: number; id: number; r: number; load: number[] } {
  const load = loadavg().map((n) => round(n, 2));
  try {
    const lines = execFileSync('vmstat', ['1', '2'], { encoding: 'utf8', timeout: 5000 }).trim().split('\n');
    const head = lines[1]!.trim().split(/\s+/);
    const last = lines[lines.length - 1]!.trim().split(/\s+/).map(Number);
    const col = (name: string) => last[head.indexOf(name)] ?? NaN;
    return { st: col('st'), id: col('id'), r: col('r'), load };
  } catch {
    return { st: NaN, id: NaN, r: NaN, load };
  }
}

/** The kernel's CPU counters, all cores together (/proc/stat's first line, what vmstat reads). */
function cpuTicks() {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal (guest time is already in user and nice)
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map(Number) as number[];
  return { busy: user! + nice! + system! + irq! + softirq!, idle: idle! + iowait!, steal: steal! };
}

/** Starts a window; `end()` says what share of the host's CPU time was stolen, busy and idle in it, in percent. */
export function hostWindow() {
  const from = cpuTicks();
  const load = loadavg()[0]!;
  return () => {
    const to = cpuTicks();
    const all = to.busy - from.busy + (to.idle - from.idle) + (to.steal - from.steal) || 1;
    return {
      steal_pct: round((100 * (to.steal - from.steal)) / all),
      busy_pct: round((100 * (to.busy - from.busy)) / all),
      idle_pct: round((100 * (to.idle - from.idle)) / all),
      load1: [round(load, 2), round(loadavg()[0]!, 2)],
    };
  };
}

interface Proc {
  pid: number;
  ppid: number;
  seconds: number;
  role: string;
}

const TICK = 100; // USER_HZ on Linux

/** Which part of a system a process is, from its command line. */
function roleOf(cmdline: string): string {
  if (/svix-server/.test(cmdline)) return 'svix';
  if (/(^|\/)postgres(\s|:|$)/.test(cmdline)) return 'postgres';
  if (/temporal\b.*start-dev|temporal-server/.test(cmdline)) return 'temporal';
  if (/worker\/main\.(ts|js)/.test(cmdline)) return 'worker';
  if (/(server|api)\/main\.(ts|js)/.test(cmdline)) return 'api';
  return 'launcher';
}

function processes(): Proc[] {
  const all: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime stime cutime cstime: what it and its children it has waited for used
      const seconds = (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICK;
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
      all.push({ pid: Number(name), ppid: Number(f[1]), seconds, role: roleOf(cmdline) });
    } catch {
      // It ended while being read.
    }
  }
  return all;
}

/** CPU seconds used so far by the processes under `roots` (themselves included), by part. */
export function cpuByRole(roots: readonly number[]): Record<string, number> {
  const all = processes();
  const children = new Map<number, Proc[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const mine = all.filter((p) => roots.includes(p.pid));
  for (let i = 0; i < mine.length; i++) mine.push(...(children.get(mine[i]!.pid) ?? []));
  const by: Record<string, number> = {};
  for (const p of mine) by[p.role] = round((by[p.role] ?? 0) + p.seconds, 2);
  return by;
}

/** What each part used between two readings of cpuByRole, in CPU seconds, and in all. */
export function cpuUsed(before: Record<string, number>, after: Record<string, number>) {
  const used: Record<string, number> = {};
  for (const role of Object.keys(after)) used[role] = round(after[role]! - (before[role] ?? 0), 2);
  used.all = round(
    Object.values(used).reduce((a, b) => a + b, 0),
    2,
  );
  return used;
}

/**
 * The hog: one process spinning on a core at nice 0, the priority the services run at, as another tenant's busy
 * process would. `stop()` ends it by its pid.
 */
export function startHog() {
  const child = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  setPriority(child.pid!, 0);
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

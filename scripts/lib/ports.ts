import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { freePort, freePortRange } from './free-port';
import { StartupError } from './startup-error';

/** A port a part of `npm start` / `npm run cluster` will listen on, and the variable that moves it. */
export interface WantedPort {
  port: number;
  part: string;
  setting: string;
  /** The part takes a block of ports from `port` on (the full Temporal server): these offsets are checked. */
  offsets?: number[];
}

/**
 * Checks every port before anything starts, so a port held by something else (often a database or
 * server left over from an earlier run) is reported at once, all of them, with who holds each and
 * what to do, rather than as whatever the part that meets it first happens to say.
 */
export async function ensurePortsFree(wanted: WantedPort[], command: string): Promise<void> {
  const taken: { want: WantedPort; port: number; holder: Holder | null }[] = [];
  for (const want of wanted) {
    for (const offset of want.offsets ?? [0]) {
      const port = want.port + offset;
      if (!(await isFree(port))) {
        taken.push({ want, port, holder: holderOf(port) });
        break;
      }
    }
  }
  if (taken.length === 0) return;
  const moves: string[] = [];
  for (const { want } of taken)
    moves.push(`${want.setting}=${want.offsets ? await freePortRange(210) : await freePort()}`);
  const pids = [...new Set(taken.flatMap((t) => (t.holder ? [t.holder.pid] : [])))];
  const leftover = taken.some((t) => /postgres|temporal/i.test(`${t.want.part} ${t.holder?.command ?? ''}`));
  throw new StartupError({
    part: taken.map((t) => `${t.want.part} (port ${t.port})`).join(', '),
    problem: taken
      .map(
        (t) =>
          `port ${t.port} is already taken by ${t.holder ? `pid ${t.holder.pid} (${t.holder.command})` : 'another program'}`,
      )
      .join('; '),
    remedy: [
      pids.length
        ? `stop what holds it${leftover ? ' (often a server left over from an earlier run)' : ''}: kill ${pids.join(' ')}`
        : `stop what holds it (ss -ltnp 'sport = :${taken[0]!.port}' shows it)`,
      `or start on other ports: ${moves.join(' ')} ${command}`,
    ].join('; '),
  });
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

interface Holder {
  pid: number;
  command: string;
}

/** Who listens on the port, from `ss` (iproute2) when it is there and may say. */
function holderOf(port: number): Holder | null {
  try {
    const out = execFileSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8', timeout: 2000 });
    const m = /users:\(\("([^"]+)",pid=(\d+)/.exec(out);
    return m ? { pid: Number(m[2]), command: m[1]! } : null;
  } catch {
    return null;
  }
}

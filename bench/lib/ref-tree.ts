import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { inheritedEnv } from './tree-service';

const root = join(__dirname, '..', '..');
const git = (args: string[], cwd = root) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** This tree's commit, `-dirty` when tracked files have changes not committed: what `B` is in the results. */
export function currentCommit(): string {
  const sha = git(['rev-parse', '--short=7', 'HEAD']);
  return git(['status', '--porcelain', '--untracked-files=no']) ? `${sha}-dirty` : sha;
}

/**
 * A commit of this repository built in a folder of its own, outside the clone and kept between sittings:
 * `<cache>/<sha>` (cacheRoot below), a clone of the local repository checked out at the
 * commit with `npm ci` from the warm npm cache. The client benchmark starts it with its own `npm start`, so a
 * release needs no bench code of its own (docs/decisions/0394-client-compare-alternates-runs.md).
 */
export function refTree(ref: string): { dir: string; sha: string; short: string } {
  const sha = git(['rev-parse', '--verify', `${ref}^{commit}`]);
  const short = sha.slice(0, 7);
  const dir = join(cacheRoot(), sha);
  const ready = join(dir, '.bench-ready');
  if (existsSync(ready)) return { dir, sha, short };
  console.log(`[bench] building ${short} in ${dir} (a clone and npm ci, once)`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, '..'), { recursive: true });
  git(['clone', '--quiet', '--no-checkout', root, dir]);
  // A commit on no branch of the clone's origin is fetched by its id.
  if (!existsSyncCommit(dir, sha)) git(['fetch', '--quiet', 'origin', sha], dir);
  git(['checkout', '--quiet', '--detach', sha], dir);
  execFileSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    env: inheritedEnv(),
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 30 * 60_000,
  });
  writeFileSync(ready, `${new Date().toISOString()}\n`);
  return { dir, sha, short };
}

/**
 * `~/.cache/tranche-bench` (XDG_CACHE_HOME moves it), unless the bench runs as root and another user could not
 * reach it: the embedded PostgreSQL then runs its binaries, in the tree's node_modules, as the postgres user, and a
 * home of mode 700 hides them. That case takes `/var/tmp/tranche-bench`, a cache the system keeps across reboots.
 */
function cacheRoot(): string {
  const home = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'tranche-bench');
  if (process.getuid?.() !== 0) return home;
  for (let dir = join(home, '..'); ; dir = dirname(dir)) {
    if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0) return '/var/tmp/tranche-bench';
    if (dir === dirname(dir)) return home;
  }
}

function existsSyncCommit(dir: string, sha: string): boolean {
  try {
    git(['cat-file', '-e', `${sha}^{commit}`], dir);
    return true;
  } catch {
    return false;
  }
}

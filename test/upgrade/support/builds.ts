import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildIdOf } from '../../../lib/runtime/build-id';

/** One build the rolling-upgrade test runs: where its dist/ is, and the version its workers poll as. */
export interface Build {
  name: 'previous' | 'current';
  /** The folder whose dist/ runs; undefined: this checkout. */
  release?: string;
  buildId: string;
  /** Whether its workers poll as a Worker Deployment version (builds before record 0386 did not). */
  versioned: boolean;
}

const root = join(__dirname, '..', '..', '..');

/**
 * The previous release (deploy/previous-release), built outside the clone by scripts/previous-release.sh
 * (PREVIOUS_RELEASE_DIR when the runner built it already), and this checkout: its dist/ (`compiled`, as the
 * rolling-upgrade test runs it: npm run build first) or its source (the replay check records from it).
 */
export function builds(o: { compiled: boolean }): { previous: Build; current: Build } {
  const dir =
    process.env.PREVIOUS_RELEASE_DIR ??
    execFileSync('bash', [join(root, 'scripts', 'previous-release.sh')], {
      encoding: 'utf8',
      timeout: 1_200_000,
    }).trim();
  const info = join(root, 'dist', 'build-info.json');
  if (o.compiled && !existsSync(info))
    throw new Error('no dist/build-info.json: run npm run build first (scripts/upgrade-check.sh does)');
  return {
    previous: {
      name: 'previous',
      release: dir,
      buildId: readFileSync(join(dir, '.build-id'), 'utf8').trim(),
      versioned: readFileSync(join(dir, 'dist', 'worker', 'create-worker.js'), 'utf8').includes(
        'workerDeploymentOptions',
      ),
    },
    current: {
      name: 'current',
      buildId: o.compiled
        ? (JSON.parse(readFileSync(info, 'utf8')) as { buildId: string }).buildId
        : (buildIdOf({}, root) ?? 'unknown'),
      versioned: true,
    },
  };
}

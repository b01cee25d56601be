import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config';

/** Where `npm run build` leaves the build's id: dist/build-info.json, beside the compiled tree. */
export const BUILD_INFO_FILE = 'build-info.json';

/**
 * The build's id, its package version and commit (`0.1.0-4a2dfb04e6fb`), from the first that says it:
 * TRANCHE_BUILD_ID; the build-info.json `npm run build` wrote beside the compiled code; the package and
 * git of a source checkout. Null when none does (an image built without .git or the build argument)
 * (docs/decisions/0386-worker-deployment-versions.md). A source checkout's uncommitted edits do not
 * change it: the commit names the build.
 */
export function buildIdOf(config: Pick<Config, 'TRANCHE_BUILD_ID'>, root = join(__dirname, '..', '..')): string | null {
  if (config.TRANCHE_BUILD_ID) return config.TRANCHE_BUILD_ID;
  const info = join(root, BUILD_INFO_FILE);
  if (existsSync(info)) {
    const { buildId } = JSON.parse(readFileSync(info, 'utf8')) as { buildId?: unknown };
    if (typeof buildId === 'string' && buildId) return buildId;
  }
  return fromGit(root);
}

/** `<package version>-<12 hex of HEAD>` of the checkout holding `root`; null outside one. */
function fromGit(root: string): string | null {
  const pkg = [join(root, 'package.json'), join(root, '..', 'package.json')].find(existsSync);
  if (!pkg) return null;
  try {
    const commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 5000,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const { version } = JSON.parse(readFileSync(pkg, 'utf8')) as { version: string };
    return /^[0-9a-f]{12}$/.test(commit) ? `${version}-${commit}` : null;
  } catch {
    return null;
  }
}

/** A worker's Worker Deployment version: its deployment and the build's id. */
export interface DeploymentVersion {
  deploymentName: string;
  buildId: string;
}

/**
 * The version a worker polls as, or null when it polls unversioned: WORKER_VERSIONING, on by default in
 * production only (lib/runtime/settings/deployment-settings.ts). Throws when versioned and no build id is known.
 */
export function deploymentVersionOf(
  config: Pick<Config, 'TRANCHE_BUILD_ID' | 'WORKER_DEPLOYMENT_NAME' | 'WORKER_VERSIONING' | 'NODE_ENV'>,
  root?: string,
): DeploymentVersion | null {
  if (!(config.WORKER_VERSIONING ?? config.NODE_ENV === 'production')) return null;
  const buildId = buildIdOf(config, root);
  if (!buildId)
    throw new Error(
      'TRANCHE_BUILD_ID: a versioned worker needs its build id and none was found (no dist/build-info.json, no git): ' +
        'set TRANCHE_BUILD_ID=<package version>-<commit>, or build the image with --build-arg TRANCHE_BUILD_ID=…',
    );
  return { deploymentName: config.WORKER_DEPLOYMENT_NAME, buildId };
}

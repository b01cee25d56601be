/**
 * `npm run -s worker-version -- <command>`: the routing of this service's Worker Deployment
 * (docs/decisions/0386-worker-deployment-versions.md). docs/operators/upgrades.md, "Deploying a new build", gives the same
 * steps with the Temporal CLI.
 *   promote                      waits until this build's workers poll, then makes their version Current
 *                                (npm start, npm run cluster and compose's worker-version step run it)
 *   ramp <percentage> [build id] sends that share of new workflows to a version (default this build's)
 *                                beside the Current one
 *   current <build id|unversioned>  makes a version Current: a rollback names the previous build
 *   status                       prints the deployment's routing and versions as JSON
 * Reads TEMPORAL_* (as every process), WORKER_DEPLOYMENT_NAME and TRANCHE_BUILD_ID (unset: the build's own).
 */
import { buildIdOf } from '../lib/runtime/build-id';
import { ConfigError, loadWorkerVersionConfig } from '../lib/runtime/config';
import { logger } from '../lib/runtime/logger';
import { connectTemporal } from '../lib/runtime/temporal';
import { deploymentRouting, promote, setCurrentVersion, setRampingVersion } from './lib/version-routing';

const USAGE =
  'usage: npm run -s worker-version -- promote | ramp <percentage 0-100> [build id] | current <build id|unversioned> | status';

async function main([command, ...args]: string[]): Promise<void> {
  const percentage = Number(args[0]);
  const valid =
    command === 'promote' ||
    command === 'status' ||
    (command === 'current' && args.length === 1) ||
    (command === 'ramp' && Number.isInteger(percentage) && percentage >= 0 && percentage <= 100);
  if (!valid) {
    console.error(USAGE);
    process.exit(2);
  }
  const config = loadWorkerVersionConfig();
  const ns = config.TEMPORAL_NAMESPACE;
  const deployment = config.WORKER_DEPLOYMENT_NAME;
  const ownBuild = () => {
    const buildId = buildIdOf(config);
    if (!buildId) throw new ConfigError('TRANCHE_BUILD_ID: unset, and this build does not say its own id');
    return buildId;
  };
  const connection = await connectTemporal(config);
  try {
    if (command === 'status') {
      console.log(
        JSON.stringify({ deployment, routing: await deploymentRouting(connection, ns, deployment) }, null, 2),
      );
    } else if (command === 'current') {
      const buildId = args[0] === 'unversioned' ? null : args[0]!;
      await setCurrentVersion(connection, ns, deployment, buildId);
      logger.info({ deployment, current: buildId ?? 'unversioned' }, 'worker version made current');
    } else if (command === 'ramp') {
      const buildId = args[1] ?? ownBuild();
      await setRampingVersion(connection, ns, deployment, buildId, percentage);
      logger.info({ deployment, ramping: buildId, percentage }, 'worker version ramping');
    } else {
      const version = { deploymentName: deployment, buildId: ownBuild() };
      const { changed, previous } = await promote(connection, ns, version, 600_000);
      logger.info(
        { version, previous, changed },
        changed ? 'worker version made current' : 'worker version already current',
      );
    }
  } finally {
    await connection.close();
  }
}

main(process.argv.slice(2)).catch((err) => {
  logger.fatal({ err }, 'worker-version failed');
  process.exit(1);
});

import { z } from 'zod';
import { blankAsUnset, bool } from '../config-parsers';

/**
 * The build a process runs and, for a worker, the Worker Deployment version it polls as
 * (docs/decisions/0386-worker-deployment-versions.md). Part of ConfigSchema (lib/runtime/config-schema.ts).
 */
export const deploymentSettings = {
  /**
   * The build's id: its package version and commit, `0.1.0-4a2dfb04e6fb`. Unset, `npm run build`'s
   * dist/build-info.json says it, or (run from source) git; an image built without .git takes it as a
   * build argument (Dockerfile). The worker's Worker Deployment version is WORKER_DEPLOYMENT_NAME and this
   * (lib/runtime/build-id.ts).
   */
  TRANCHE_BUILD_ID: blankAsUnset(
    z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$/, 'letters, digits and . _ + -, at most 100')
      .optional(),
  ),
  /**
   * Worker: the Worker Deployment its versions belong to, one per service and behaviour set on a
   * namespace. Temporal refuses `.` and `:` in it.
   */
  WORKER_DEPLOYMENT_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, 'letters, digits, - and _')
    .default('tranche'),
  /**
   * Worker: poll as the version `WORKER_DEPLOYMENT_NAME:TRANCHE_BUILD_ID`, which receives tasks once it is
   * made Current or Ramping (docs/operators/upgrades.md, "Deploying a new build"). Unset: on in production, off under
   * NODE_ENV=development or test (npm start turns it on; the tests' workers each poll a task queue of their
   * own, unversioned). false: poll unversioned, as builds before record 0386 did.
   */
  WORKER_VERSIONING: blankAsUnset(bool.optional()),
};

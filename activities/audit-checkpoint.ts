import type { Orm } from '../db/orm';
import { nextCheckpoint } from '../db/audit-checkpoint';
import type { AuditCheckpoint } from '../domain/audit-checkpoint';
import { logger } from '../lib/runtime/logger';
import { recordAuditCheckpoint } from '../lib/runtime/metrics';

/** The audit checkpoint's activity (workflows/audit-checkpoint.ts): the heads now, built on the previous checkpoint. */
export function createAuditCheckpointActivities(deps: { orm: Orm }) {
  return {
    async takeAuditCheckpoint(previous: AuditCheckpoint | null): Promise<AuditCheckpoint> {
      const checkpoint = await nextCheckpoint(deps.orm.em.getConnection().getKnex(), previous, new Date());
      // An organisation whose chain lost its checkpointed head is tampering (or a restore from an
      // old backup): loud, every round, until someone looks (audit:verify names the entry).
      if (checkpoint.heldBack.length)
        logger.error(
          { orgIds: checkpoint.heldBack },
          'audit trail no longer holds its checkpointed head; run npm run audit:verify -- --org <id>',
        );
      // Its age is what the audit checkpoint's alert reads (docs/decisions/0410-operator-alerts.md).
      recordAuditCheckpoint(checkpoint.takenAt);
      return checkpoint;
    },
  };
}

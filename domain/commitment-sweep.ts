/**
 * The commitment sweep (docs/decisions/0371-commitment-sweep.md): its workflow's name, the schedule
 * that starts it, and what a run answers. The worker imports this module, not the workflow code.
 */
export const COMMITMENT_SWEEP_WORKFLOW = 'commitmentSweepWorkflow';

/** One schedule (and one workflow id) per task queue: each deployment on a namespace sweeps its own database. */
export const commitmentSweepScheduleId = (taskQueue: string) => `commitment-sweep-${taskQueue}`;

/** A commitment given back because its workflow never started. */
export interface SweptCommitment {
  subscriptionId: string;
  offeringId: string;
  amount: string;
}

export interface CommitmentSweepResult {
  /** Unreleased commitments past the grace period with no subscription recorded, asked about. */
  examined: number;
  /** Those Temporal knew no workflow for: given back. */
  released: SweptCommitment[];
  /** Unsigned subscriptions past their lifetime, woken with their deadline. */
  draftsWoken: number;
}

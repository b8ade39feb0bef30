import { DataSource } from 'typeorm';

export interface WorkflowFailure {
  workflowId: string;
  runId: string;
  workflowType: string;
  step: string;
  error: string;
}

/** Idempotent: a retried record of the same run's step writes one row. */
export async function recordWorkflowFailure(ds: DataSource, f: WorkflowFailure): Promise<void> {
  await ds.query(
    `INSERT INTO workflow_failures (workflow_id, run_id, workflow_type, step, error) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (run_id, step) DO NOTHING`,
    [f.workflowId, f.runId, f.workflowType, f.step, f.error.slice(0, 2000)],
  );
}

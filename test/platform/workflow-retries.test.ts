import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { DATABASE_RETRY } from '../../workflows/platform/database-retry';
import { itemDeletedSignal, proofDeletionWorkflow } from '../../workflows/proof/proof-deletion-workflow';
import { ctx } from '../support/root-hooks';

const DATABASE_WORKFLOWS = [
  'proof/proof-deletion-workflow.ts', 'proof/proof-revocation-workflow.ts', 'proof/proof-approval-workflow.ts',
  'customer-loop/thread-sla-workflow.ts', 'customer-loop/signal-analysis-workflow.ts', 'platform/maintenance-workflow.ts',
];

describe('database activities retry without a cap; a final failure is recorded', () => {
  it('the database retry policy has a maximum interval and no attempt cap', () => {
    assert.equal((DATABASE_RETRY as { maximumAttempts?: number }).maximumAttempts, undefined);
    assert.equal(DATABASE_RETRY.maximumInterval, '1 minute');
  });

  for (const file of DATABASE_WORKFLOWS) {
    it(`${file} retries its database steps with DATABASE_RETRY`, () => {
      const source = fs.readFileSync(path.join(__dirname, '../../workflows', file), 'utf8');
      assert.match(source, /retry: DATABASE_RETRY/);
      assert.doesNotMatch(source, /maximumAttempts: \d/);
    });
  }

  it('a step that fails for good is written to workflow_failures and the workflow fails', async () => {
    const taskQueue = `failing-${randomBytes(4).toString('hex')}`;
    const activities = {
      ...createActivities({ dataSource: ctx.dataSource, config: ctx.config }),
      closeRecoveryWindow: async (): Promise<boolean> => {
        throw ApplicationFailure.nonRetryable('the row is gone', 'GONE');
      },
    };
    const worker = await Worker.create({
      connection: ctx.nativeConnection, taskQueue, activities, workflowBundle: ctx.workflowBundle,
    });
    const workflowId = `proof-deletion/test-${randomBytes(4).toString('hex')}`;
    await worker.runUntil(async () => {
      const handle = await ctx.temporal.workflow.signalWithStart(proofDeletionWorkflow, {
        workflowId, taskQueue, args: [{ proofItemId: 'prf_missing' }],
        signal: itemDeletedSignal, signalArgs: [{ deletedAt: new Date().toISOString(), recoveryClosesAt: new Date().toISOString() }],
      });
      await assert.rejects(handle.result(), WorkflowFailedError);
    });
    const rows: Array<{ step: string; error: string; workflow_type: string }> = await ctx.dataSource.query(
      'SELECT step, error, workflow_type FROM workflow_failures WHERE workflow_id = $1', [workflowId],
    );
    assert.deepEqual(rows, [{ step: 'closeRecoveryWindow', error: 'the row is gone', workflow_type: 'proofDeletionWorkflow' }]);
  });
});

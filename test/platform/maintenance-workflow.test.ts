import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { maintenanceWorkflow } from '../../workflows/platform/maintenance-workflow';
import { eventually } from '../support/fixtures';
import { ctx } from '../support/root-hooks';

describe('maintenance workflow (real Temporal)', () => {
  it('purges expired idempotency records, used nonces and old rate windows, and keeps live ones', async function () {
    this.timeout(30_000);
    const tag = randomBytes(4).toString('hex');
    await ctx.dataSource.query(
      `INSERT INTO idempotency_records (credential_id, idempotency_key, request_hash, state, claim_token, locked_until, expires_at)
       VALUES ($1, 'expired-key', 'h', 'completed', 't1', now(), now() - interval '1 minute'),
              ($1, 'live-key', 'h', 'completed', 't2', now(), now() + interval '1 hour')`, [`cred-${tag}`]);
    await ctx.dataSource.query(
      `INSERT INTO identity_nonces (product_id, nonce, expires_at)
       VALUES ($1, 'old-nonce', now() - interval '1 second'), ($1, 'live-nonce', now() + interval '1 hour')`, [`prd-${tag}`]);
    await ctx.dataSource.query(
      `INSERT INTO rate_limit_windows (key_id, window_start, count) VALUES ($1, now() - interval '2 hours', 5)`, [`key-${tag}`]);

    const handle = await ctx.temporal.workflow.start(maintenanceWorkflow, {
      workflowId: `maintenance-test/${tag}`, taskQueue: ctx.config.taskQueue, args: [{ intervalMs: 200 }],
    });
    try {
      const purged = await eventually(async () => {
        const rows = await ctx.dataSource.query(
          `SELECT (SELECT count(*) FROM idempotency_records WHERE credential_id = $1 AND idempotency_key = 'expired-key')
                + (SELECT count(*) FROM identity_nonces WHERE product_id = $2 AND nonce = 'old-nonce')
                + (SELECT count(*) FROM rate_limit_windows WHERE key_id = $3) AS n`,
          [`cred-${tag}`, `prd-${tag}`, `key-${tag}`]);
        return Number(rows[0].n) === 0;
      }, 20_000);
      assert.equal(purged, true, 'expired rows were purged');
      const live = await ctx.dataSource.query(
        `SELECT (SELECT count(*) FROM idempotency_records WHERE credential_id = $1)
              + (SELECT count(*) FROM identity_nonces WHERE product_id = $2) AS n`, [`cred-${tag}`, `prd-${tag}`]);
      assert.equal(Number(live[0].n), 2, 'live rows were kept');
      // The rows go at the activity's commit, a moment before Temporal records its completion.
      const completed = await eventually(async () => {
        const history = await handle.fetchHistory();
        return (history.events ?? []).some((e) => e.activityTaskCompletedEventAttributes);
      });
      assert.ok(completed, 'the purge ran as an activity');
    } finally {
      await handle.terminate('test done');
    }
  });
});

import assert from 'node:assert/strict';
import { vote } from '../../db/customer-loop/features';
import { LOOP_SCOPES, teammate } from '../support/customer-loop';
import { call, createTenant } from '../support/fixtures';
import { countingDataSource } from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';

describe('indexes and counting in the database', () => {
  for (const [table, column] of [
    ['proof_placement_items', 'proof_item_id'], ['webhook_deliveries', 'endpoint_id'],
    ['outbox_events', 'processed_at'], ['teammate_sessions', 'expires_at'],
    ['room_attachments', 'created_at'], ['room_attachments', 'expired_at'],
  ]) {
    it(`${table}(${column}) has an index that leads with it`, async () => {
      const rows: Array<{ indexdef: string }> = await ctx.dataSource.query(
        `SELECT indexdef FROM pg_indexes WHERE tablename = $1`, [table]);
      assert.ok(rows.some((r) => new RegExp(`\\(${column}[,)\\s]`).test(r.indexdef)), rows.map((r) => r.indexdef).join('\n'));
    });
  }

  it('a vote counts voters in SQL; it never reads every voter under the row lock', async () => {
    const tenant = await createTenant(LOOP_SCOPES);
    const feature = (await call(teammate(tenant.owner, 'POST', '/api/workspace/features',
      { productId: tenant.product.id, title: 'Dark mode', problem: 'Too bright' }))).json().data;
    const { ds, statements } = await countingDataSource();
    try {
      const tenantRef = { organizationId: tenant.organizationId, productId: tenant.product.id };
      await vote(ds, tenantRef, feature.id, 'voter-1', false);
      statements.length = 0;
      const result = await vote(ds, tenantRef, feature.id, 'voter-2', true);
      assert.equal(result.voteCount, 2);
      assert.equal(result.followerCount, 1);
      assert.ok(!statements.some((s) => /SELECT\s+end_user_id\s+FROM\s+feature_votes\s+WHERE\s+feature_id\s*=\s*\$1\s*$/i.test(s.trim())),
        'no statement loads the voter list');
      assert.equal(result.scoreBreakdown.distinctEndUsers.count, 2);
    } finally {
      await ds.destroy();
    }
  });
});

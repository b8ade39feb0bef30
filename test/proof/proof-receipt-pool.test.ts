import assert from 'node:assert/strict';
import { openDatabase } from '../../db/data-source';
import { submitProof } from '../../db/proof/proof-submissions';
import { createProofTenant, submissionBody } from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';

describe('receipts issued inside a grant transaction', () => {
  it('12 concurrent submissions on a pool of 2 with a cold key cache all commit (no second connection)', async () => {
    const tenant = await createProofTenant();
    // A new DataSource has no cached active key, as after a restart.
    const ds = await openDatabase(ctx.databaseUrl, 2);
    try {
      const results = await Promise.all(Array.from({ length: 12 }, () => submitProof(ds, {
        organizationId: tenant.organizationId, productId: tenant.product.id, keyId: tenant.keyId, ip: '127.0.0.1',
        monthlyAllowance: 1000, dailyCeiling: 10_000,
      }, submissionBody() as never)));
      assert.equal(new Set(results.map((r) => r.proofItemId)).size, 12);
      const [{ n }] = await ctx.dataSource.query(
        'SELECT count(*)::int AS n FROM proof_receipts WHERE proof_item_id = ANY($1)', [results.map((r) => r.proofItemId)],
      );
      assert.equal(n, 12);
    } finally {
      await ds.destroy();
    }
  });
});

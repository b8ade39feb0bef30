import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { call } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { assetContentHash } from '../../db/collection/review';
import { CollectionTenant, createCollectionTenant, customerCall, fillDraft, startDraft, submitDraft } from '../support/collection';

describe('collection: /api/proof/review', () => {
  let t: CollectionTenant;
  before(async () => {
    t = await createCollectionTenant();
  });

  it('lists new wordings and assets quoting the customer; decisions need the exact hash', async () => {
    const d = await startDraft(t);
    await fillDraft(t, d);
    const s = (await submitDraft(d)).json().data;
    const version = (await call({
      method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/versions`, headers: { authorization: `Bearer ${t.key}` },
      payload: { content: { text: 'Nine days to two.' }, changeReason: 'shorter quote' },
    })).json().data;
    const content = { quote: 'Nine days to two.', customerApprovals: [{ proofItemId: s.proofItemId, state: 'pending' }] };
    const assetId = `ast_${randomBytes(10).toString('hex')}`;
    await ctx.dataSource.query(
      `INSERT INTO proof_assets (id, organization_id, product_id, asset_type, source_proof_ids, source_version_ids, approval_state,
         channel_eligibility, files, content, media_type, body)
       VALUES ($1, $2, $3, 'quote_card', $4, $5, 'draft', '{website}', '{}', $6, 'image/svg+xml', '\\x00')`,
      [assetId, t.organizationId, t.product.id, [s.proofItemId], [version.id], JSON.stringify(content)]);
    const review = (opts: object) => customerCall({ ...opts, headers: { 'x-control-token': s.controlToken } } as never);
    const queue = await review({ method: 'GET', url: '/api/proof/review' });
    assert.equal(queue.statusCode, 200, queue.body);
    assert.deepEqual(queue.json().data.versions.map((v: { id: string }) => v.id), [version.id]);
    assert.equal(queue.json().data.assets[0].id, assetId);
    assert.equal(queue.json().data.assets[0].contentHash, assetContentHash(content));
    assert.equal(queue.json().data.assets[0].content.customerApprovals, undefined);

    const stale = await review({ method: 'POST', url: '/api/proof/review', payload: { kind: 'asset', id: assetId, decision: 'approve', contentHash: 'sha256:old' } });
    assert.equal(stale.statusCode, 409);
    const approved = await review({ method: 'POST', url: '/api/proof/review', payload: { kind: 'asset', id: assetId, decision: 'approve', contentHash: assetContentHash(content) } });
    assert.equal(approved.statusCode, 200, approved.body);
    const [row] = await ctx.dataSource.query(`SELECT content FROM proof_assets WHERE id = $1`, [assetId]);
    assert.deepEqual(row.content.customerApprovals, [{ proofItemId: s.proofItemId, state: 'approved' }]);
    const declined = await review({ method: 'POST', url: '/api/proof/review', payload: { kind: 'version', id: version.id, decision: 'decline', contentHash: version.contentHash } });
    assert.equal(declined.statusCode, 200, declined.body);
    const after = (await review({ method: 'GET', url: '/api/proof/review' })).json().data;
    assert.deepEqual(after, { versions: [], assets: [] });

    const stranger = await startDraft(t);
    await fillDraft(t, stranger);
    const other = (await submitDraft(stranger)).json().data;
    const foreign = await customerCall({
      method: 'POST', url: '/api/proof/review', headers: { 'x-control-token': other.controlToken },
      payload: { kind: 'asset', id: assetId, decision: 'decline', contentHash: assetContentHash(content) },
    });
    assert.equal(foreign.statusCode, 404, 'another person\'s asset');
  });
});

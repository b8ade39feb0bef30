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

    const stale = await review({ method: 'POST', url: '/api/proof/review',
      payload: { kind: 'asset', id: assetId, decision: 'approve', contentHash: 'sha256:old' } });
    assert.equal(stale.statusCode, 409);
    const approved = await review({ method: 'POST', url: '/api/proof/review',
      payload: { kind: 'asset', id: assetId, decision: 'approve', contentHash: assetContentHash(content) } });
    assert.equal(approved.statusCode, 200, approved.body);
    const [row] = await ctx.dataSource.query(`SELECT content FROM proof_assets WHERE id = $1`, [assetId]);
    assert.deepEqual(row.content.customerApprovals, [{ proofItemId: s.proofItemId, state: 'approved' }]);
    const declined = await review({ method: 'POST', url: '/api/proof/review',
      payload: { kind: 'version', id: version.id, decision: 'decline', contentHash: version.contentHash } });
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

  it('a case study quoting several customers shows each of them only their own quotes', async () => {
    const people = [];
    for (const who of ['ada', 'grace']) {
      const d = await startDraft(t);
      await fillDraft(t, d);
      const s = (await submitDraft(d)).json().data;
      people.push({ who, proofItemId: s.proofItemId as string, versionId: s.originalVersionId as string, controlToken: s.controlToken as string });
    }
    const [ada, grace] = people;
    const statement = (text: string, ...cited: Array<{ versionId: string; quote: string }>) =>
      ({ text, citations: cited.map((c) => ({ sourceVersionId: c.versionId, quote: c.quote })) });
    const content = {
      title: 'Faster onboarding at scale',
      sections: [
        { heading: 'Challenge', statements: [statement('Ada said "ada-only-quote".', { versionId: ada.versionId, quote: 'ada-only-quote' })] },
        { heading: 'Results', statements: [
          statement('Grace said "grace-only-quote".', { versionId: grace.versionId, quote: 'grace-only-quote' }),
          statement('Both said "ada-shared-quote" and "grace-shared-quote".',
            { versionId: ada.versionId, quote: 'ada-shared-quote' }, { versionId: grace.versionId, quote: 'grace-shared-quote' }),
        ] },
      ],
      length: 'standard', goal: 'Show onboarding',
      customerApprovals: people.map((p) => ({ proofItemId: p.proofItemId, state: 'pending' })),
    };
    const assetId = `ast_${randomBytes(10).toString('hex')}`;
    await ctx.dataSource.query(
      `INSERT INTO proof_assets (id, organization_id, product_id, asset_type, source_proof_ids, source_version_ids, approval_state,
         channel_eligibility, files, content, media_type, body)
       VALUES ($1, $2, $3, 'case_study', $4, $5, 'draft', '{case_study}', '{case-study.json}', $6, 'application/json', '\\x00')`,
      [assetId, t.organizationId, t.product.id, people.map((p) => p.proofItemId), people.map((p) => p.versionId), JSON.stringify(content)]);

    for (const [me, other] of [[ada, grace], [grace, ada]]) {
      const queue = await customerCall({ method: 'GET', url: '/api/proof/review', headers: { 'x-control-token': me.controlToken } });
      assert.equal(queue.statusCode, 200, queue.body);
      const asset = queue.json().data.assets.find((a: { id: string }) => a.id === assetId);
      assert.ok(asset, `${me.who} is asked about the case study`);
      const texts = asset.content.sections.flatMap((x: { statements: Array<{ text: string }> }) => x.statements.map((st) => st.text));
      assert.deepEqual(texts, [`${me.who === 'ada' ? 'Ada' : 'Grace'} said "${me.who}-only-quote".`], `${me.who} sees only their own quote`);
      assert.ok(!queue.body.includes(`${other.who}-`), `${me.who} sees none of ${other.who}'s words: ${queue.body}`);
      assert.ok(!queue.body.includes(other.versionId), `nor which of ${other.who}'s versions it cites`);
      assert.equal(asset.contentHash, assetContentHash(content), 'the hash is the whole asset\'s');
    }
    const approved = await customerCall({
      method: 'POST', url: '/api/proof/review', headers: { 'x-control-token': ada.controlToken },
      payload: { kind: 'asset', id: assetId, decision: 'approve', contentHash: assetContentHash(content) },
    });
    assert.equal(approved.statusCode, 200, approved.body);
    assert.deepEqual(approved.json().data.customerApprovals, [{ proofItemId: ada.proofItemId, state: 'approved' }], 'the answer names Ada\'s entry only');
  });
});

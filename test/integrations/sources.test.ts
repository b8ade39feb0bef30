import assert from 'node:assert/strict';
import { approvedItem, submissionBody, submit } from '../support/proof-fixtures';
import { call, createTenant, errorCode, eventually, withKey } from '../support/fixtures';
import { IntegrationTenant, asOwner, createIntegrationTenant, outboxOf, postValueEvent, uniqueId, valueEvent } from '../support/integrations';
import { ctx } from '../support/root-hooks';
import { route } from '../support/routes';

describe('integrations: sources and brand mentions', () => {
  let tenant: IntegrationTenant;
  const sources = (query: string, key = tenant.key) => call(withKey(key, { method: 'GET', url: route('/api/v1/sources', {}, query) }));
  const mention = (body: object = {}) => asOwner(tenant, 'POST', '/api/workspace/proof/brand-mentions', {
    productId: tenant.product.id, platform: 'g2', url: `https://www.g2.com/reviews/${uniqueId('r')}`, author: 'Grace Hopper',
    text: 'The export finally takes seconds instead of minutes.', rating: 5, publishedAt: '2026-01-05T10:00:00Z', ...body,
  });

  before(async () => {
    tenant = await createIntegrationTenant();
  });

  it('writes a source for a submission with consented attribution, and appends approval to its provenance', async () => {
    const s = await approvedItem(tenant, submissionBody({
      consent: { ...submissionBody().consent, displayMode: 'first_name', identityFields: ['name', 'company'] },
    }));
    const res = await sources(`?proofItemId=${s.proofItemId}`);
    assert.equal(res.statusCode, 200, res.body);
    const [src] = res.json().data;
    assert.match(src.id, /^src_/);
    assert.deepEqual(src.origin, { system: 'proof_submission', externalId: s.proofItemId, url: null });
    assert.equal(src.kind, 'testimonial');
    assert.deepEqual(src.attribution, { name: 'Ada', company: 'Analytical Ltd' });
    assert.equal(src.capturedText, 'We cut onboarding from 9 days to 2.');
    assert.deepEqual(src.provenance.map((p: { step: string }) => p.step), ['captured', 'stored', 'approved']);
    assert.match(src.provenance[0].contentHash, /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(src.policy, { reuse: 'allowed_with_consent', reasons: [] });
    const one = await call(withKey(tenant.readKey, { method: 'GET', url: `/api/v1/sources/${src.id}` }));
    assert.equal(one.json().data.capturedText, src.capturedText, 'approved public text needs no read_private');
  });

  it('hides unapproved text without proof:read_private, also from search', async () => {
    const s = await submit(tenant, submissionBody({ content: { text: 'Zebra crossing unapproved wording', title: 'Unapproved' } }));
    const [mine] = (await sources(`?proofItemId=${s.proofItemId}`)).json().data;
    assert.equal(mine.capturedText, 'Zebra crossing unapproved wording');
    assert.equal(mine.capturedTextWithheld, false);
    const [hidden] = (await sources(`?proofItemId=${s.proofItemId}`, tenant.readKey)).json().data;
    assert.equal(hidden.capturedText, null);
    assert.equal(hidden.capturedTextWithheld, true);
    assert.equal((await sources('?q=zebra%20CROSSING')).json().data.length, 1);
    assert.equal((await sources('?q=zebra', tenant.readKey)).json().data.length, 0);
    assert.equal((await sources('?q=zebra%20nothing')).json().data.length, 0);
  });

  it('blocks and empties a revoked item\'s source', async () => {
    const s = await approvedItem(tenant);
    const filed = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/revoke` }));
    await asOwner(tenant, 'POST', `/api/workspace/proof/revocations/${filed.json().data.revocation.id}/complete`);
    const [src] = (await sources(`?proofItemId=${s.proofItemId}`)).json().data;
    assert.equal(src.capturedText, null);
    assert.equal(src.policy.reuse, 'blocked');
    assert.ok(src.policy.reasons.includes('revoked'));
    assert.ok(src.provenance.some((p: { step: string }) => p.step === 'revoked'));
  });

  it('serves none of a revoked or deleted item\'s words: no text, title or attribution, by list or by id, and search finds none', async () => {
    for (const end of ['revoked', 'deleted'] as const) {
      const m = uniqueId('zq').toLowerCase();
      const s = await approvedItem(tenant, submissionBody({
        content: { text: `Exports take seconds ${m}`, title: `Fast exports ${m}`, attribution: { name: `Ada ${m}`, company: 'Analytical Ltd' } },
      }));
      assert.equal((await sources(`?q=${m}`)).json().data.length, 1, `${end}: found while the item lives`);
      if (end === 'revoked') {
        const filed = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/revoke` }));
        await asOwner(tenant, 'POST', `/api/workspace/proof/revocations/${filed.json().data.revocation.id}/complete`);
      } else {
        assert.equal((await asOwner(tenant, 'DELETE', `/api/workspace/proof/items/${s.proofItemId}`)).statusCode, 200);
      }
      const listed = await sources(`?proofItemId=${s.proofItemId}`);
      const [src] = listed.json().data;
      assert.deepEqual([src.capturedText, src.title, src.attribution, src.policy.reuse], [null, null, null, 'blocked'], end);
      const one = await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/sources/${src.id}` }));
      assert.equal(one.statusCode, 200);
      assert.ok(!listed.body.includes(m) && !one.body.includes(m), `${end}: the words are not served`);
      assert.equal((await sources(`?q=${m}`)).json().data.length, 0, `${end}: nor found by search`);
    }
  });

  it('writes sources for value events and filters by system, kind and externalId', async () => {
    const body = valueEvent({ type: 'resolved_ticket', properties: { ticketId: 'T-9' } });
    const e = (await postValueEvent(tenant, body)).json().data;
    const res = (await sources(`?system=value_event&kind=ticket,survey_answer&externalId=${body.eventId}`)).json().data;
    assert.equal(res.length, 1);
    assert.equal(res[0].links.valueEventId, e.id);
    assert.equal(res[0].policy.reuse, 'internal_only');
    assert.equal((await sources('?kind=ticket&kind=nonsense')).statusCode, 400);
    assert.equal((await sources('?q=a')).statusCode, 400);
    assert.equal((await sources('?unknown=1')).statusCode, 400);
  });

  it('records a brand mention once per URL with its source and announcement, and imports it as a review that renders nowhere', async () => {
    const first = await mention();
    assert.equal(first.statusCode, 201, first.body);
    const m = first.json().data;
    assert.match(m.id, /^bm_/);
    const again = await mention({ url: m.url, text: 'different' });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().data.id, m.id);
    const announced = (await outboxOf(tenant.product.id, 'proof.brand_mention.created')).filter((o) =>
      (o.payload.properties as Record<string, unknown>).brandMentionId === m.id);
    assert.equal(announced.length, 1);
    assert.deepEqual(announced[0].payload.properties, { brandMentionId: m.id, platform: 'g2' });
    const [src] = (await sources(`?system=brand_mention&externalId=${m.id}`)).json().data;
    assert.equal(src.origin.url, m.url);
    assert.equal(src.kind, 'mention');

    const imported = await asOwner(tenant, 'POST', `/api/workspace/proof/brand-mentions/${m.id}/import`);
    assert.equal(imported.statusCode, 201, imported.body);
    const { proofItemId } = imported.json().data;
    const item = await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/proof/items/${proofItemId}` }));
    assert.equal(item.json().data.item.type, 'review');
    assert.equal(item.json().data.item.status, 'submitted');
    assert.deepEqual(item.json().data.eligibleChannels, []);
    const [grants] = await ctx.dataSource.query(`SELECT count(*)::int AS n FROM consent_grants WHERE proof_item_id = $1`, [proofItemId]);
    assert.equal(grants.n, 0);
    assert.ok((await outboxOf(tenant.product.id, 'proof.item.imported')).length >= 1);
    const linked = (await sources(`?proofItemId=${proofItemId}`)).json().data[0];
    assert.equal(linked.links.brandMentionId, m.id);
    assert.ok(linked.provenance.some((p: { step: string }) => p.step === 'imported'));
    assert.equal(errorCode(await asOwner(tenant, 'POST', `/api/workspace/proof/brand-mentions/${m.id}/import`)), 'CONFLICT');

    const blocked = (await mention({ reuse: 'blocked' })).json().data;
    const refused = await asOwner(tenant, 'POST', `/api/workspace/proof/brand-mentions/${blocked.id}/import`);
    assert.equal(refused.statusCode, 422);
    assert.equal(errorCode(refused), 'SOURCE_POLICY_BLOCKED');
  });

  it('refuses a publishedAt that is no date-time, or a date that does not exist, with 400', async () => {
    for (const publishedAt of ['1', '2026-02-30T10:00:00Z']) {
      const res = await mention({ url: `https://example.com/bad-date/${publishedAt}`, publishedAt });
      assert.equal(res.statusCode, 400, `${publishedAt}: ${res.body}`);
      assert.equal(errorCode(res), 'VALIDATION_FAILED');
    }
  });

  it('makes a source of every analysed signal, and a brand mention of a review signal', async () => {
    const loop = await createTenant(['service:signals:write', 'service:sources:read']);
    const marker = uniqueId('review');
    const off = ctx.fakeAi.when(marker, { json: { sentiment: 'positive', urgency: 'low', summary: 'Happy with exports.', candidateFeatureIds: [] } });
    try {
      const res = await call(withKey(loop.key, { method: 'POST', url: '/api/v1/signals', payload: {
        endUserId: 'user-7', kind: 'review', title: 'Love it', body: `Exports are fast now ${marker}`, idempotencyKey: uniqueId('idem'),
      } }));
      assert.equal(res.statusCode, 201, res.body);
      const signalId = res.json().data.id;
      const found = await eventually(async () => {
        const list = (await call(withKey(loop.key, { method: 'GET', url: `/api/v1/sources?system=signal&externalId=${signalId}` }))).json().data;
        return list.length === 1 ? list : null;
      }, 30_000);
      assert.equal(found[0].links.signalId, signalId);
      assert.equal(found[0].policy.reuse, 'internal_only');
      const [m] = await ctx.dataSource.query(`SELECT id, platform FROM proof_brand_mentions WHERE signal_id = $1`, [signalId]);
      assert.equal(m.platform, 'other');
      assert.equal((await outboxOf(loop.product.id, 'proof.brand_mention.created')).length, 1);
    } finally {
      off();
    }
  });

  it('keeps sources and mentions to their tenant', async () => {
    const other = await createTenant(['service:sources:read']);
    const [src] = (await sources('?system=proof_submission')).json().data;
    const res = await call(withKey(other.key, { method: 'GET', url: `/api/v1/sources/${src.id}` }));
    assert.equal(errorCode(res), 'NOT_FOUND');
    assert.equal((await call(withKey(other.key, { method: 'GET', url: '/api/v1/sources' }))).json().data.length, 0);
    const m = (await mention()).json().data;
    assert.equal(errorCode(await asOwner(other as IntegrationTenant, 'POST', `/api/workspace/proof/brand-mentions/${m.id}/import`)), 'NOT_FOUND');
    assert.equal(errorCode(await asOwner(other as IntegrationTenant, 'POST', '/api/workspace/proof/brand-mentions',
      { productId: tenant.product.id, platform: 'web', url: 'https://x.test/a', text: 'x' })), 'NOT_FOUND');
    assert.equal(errorCode(await call(withKey(tenant.key, { method: 'GET', url: '/api/workspace/proof/brand-mentions' }))), 'FORBIDDEN');
    const noScope = await createTenant(['service:proof:read']);
    assert.equal(errorCode(await call(withKey(noScope.key, { method: 'GET', url: '/api/v1/sources' }))), 'INSUFFICIENT_SCOPE');
  });
});

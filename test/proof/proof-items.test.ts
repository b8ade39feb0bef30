import assert from 'node:assert/strict';
import { listItems } from '../../db/proof/proof-items';
import { call, createTenant, errorCode, withKey } from '../support/fixtures';
import {
  ProofTenant, approvedItem, countingDataSource, createProofTenant, getItem, rawQuery, requestApproval, submissionBody, submit,
} from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import { route } from '../support/routes';

const newVersion = (tenant: ProofTenant, itemId: string, payload: object) =>
  call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${itemId}/versions`, payload }));

describe('proof items and versions', () => {
  let tenant: ProofTenant;

  before(async () => {
    tenant = await createProofTenant();
  });

  it('an item read has the public version, eligible channels and per-channel eligibility', async () => {
    const s = await approvedItem(tenant);
    const res = await getItem(tenant.readKey, s.proofItemId);
    assert.equal(res.statusCode, 200, res.body);
    const data = res.json().data;
    assert.equal(data.item.status, 'approved');
    assert.equal(data.item.approvedPublicVersionId, s.originalVersionId);
    assert.equal(data.publicVersion.id, s.originalVersionId);
    assert.deepEqual(data.eligibleChannels, ['website', 'in_app', 'email']);
    const paid = data.eligibility.find((e: { channel: string }) => e.channel === 'paid_ads');
    assert.equal(paid.eligible, false);
    assert.ok(paid.reasons.includes('channel_not_consented'));
    const web = data.eligibility.find((e: { channel: string }) => e.channel === 'website');
    assert.deepEqual(web, {
      channel: 'website', eligible: true, reasons: [], grantId: s.consentGrantId,
      identityFields: ['name', 'company', 'title'], disclosure: null, labels: ['verified_customer'],
    });
    assert.equal(data.expanded, undefined, 'expanded only when asked');
  });

  it('an unapproved item is eligible nowhere and has no public version', async () => {
    const s = await submit(tenant);
    const data = (await getItem(tenant.readKey, s.proofItemId)).json().data;
    assert.equal(data.publicVersion, null);
    assert.deepEqual(data.eligibleChannels, []);
    assert.ok(data.eligibility.every((e: { reasons: string[] }) => e.reasons.includes('not_approved')));
  });

  it('another product\'s or tenant\'s item answers 404 on every item endpoint', async () => {
    const s = await submit(tenant);
    const other = await createProofTenant();
    for (const [method, url, payload] of [
      ['GET', `/api/v1/proof/items/${s.proofItemId}`], ['GET', `/api/v1/proof/items/${s.proofItemId}/versions`],
      ['GET', `/api/v1/proof/items/${s.proofItemId}/consent`],
      ['POST', `/api/v1/proof/items/${s.proofItemId}/versions`, { content: { text: 'x' }, changeReason: 'why not' }],
      ['POST', `/api/v1/proof/items/${s.proofItemId}/request-approval`, { versionId: s.originalVersionId }],
      ['POST', `/api/v1/proof/items/${s.proofItemId}/revoke`, {}],
      ['POST', `/api/v1/proof/consents/${s.consentGrantId}/revoke`],
    ] as Array<['GET' | 'POST', string, object?]>) {
      const res = await call(withKey(other.key, { method, url, ...(payload ? { payload } : {}) }));
      assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`);
      assert.equal(errorCode(res), 'NOT_FOUND');
    }
    const list = await call(withKey(other.key, { method: 'GET', url: '/api/v1/proof/items' }));
    assert.deepEqual(list.json().data, []);
    const events = await call(withKey(other.key, { method: 'GET', url: `/api/v1/proof/events?proofItemId=${s.proofItemId}` }));
    assert.deepEqual(events.json().data, []);
  });

  it('a draft derivative gets a semantic diff and a content hash; the original never changes', async () => {
    const s = await submit(tenant);
    const res = await newVersion(tenant, s.proofItemId, {
      content: { text: 'We cut onboarding from 9 days to 3.', title: 'Faster onboarding', rating: 4,
        attribution: { name: 'Ada L.', company: 'Analytical Ltd' } },
      changeReason: 'shorter attribution', modelId: 'model-x', locale: 'en-GB',
    });
    assert.equal(res.statusCode, 201, res.body);
    const v = res.json().data;
    assert.equal(v.versionNumber, 2);
    assert.equal(v.isOriginal, false);
    assert.equal(v.approvalState, 'draft');
    assert.equal(v.parentVersionId, s.originalVersionId);
    assert.equal(v.modelId, 'model-x');
    assert.match(v.contentHash, /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(v.semanticDiff.numbers, { added: ['3'], removed: ['2'] });
    assert.deepEqual(v.semanticDiff.rating, { from: 5, to: 4 });
    assert.deepEqual(v.semanticDiff.attribution, { added: [], removed: ['title'], changed: ['name'] });
    assert.equal(v.semanticDiff.changed, true);
    const versions = await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/proof/items/${s.proofItemId}/versions` }));
    const [original, draft] = versions.json().data;
    assert.equal(original.id, s.originalVersionId);
    assert.equal(original.content.text, 'We cut onboarding from 9 days to 2.');
    assert.equal(draft.id, v.id);
    await assert.rejects(
      rawQuery(`UPDATE proof_versions SET content = '{"text":"changed"}' WHERE id = $1`, [s.originalVersionId]),
      /immutable/,
    );
    await assert.rejects(rawQuery('DELETE FROM proof_versions WHERE id = $1', [s.originalVersionId]), /immutable/);
    await assert.rejects(
      rawQuery(`UPDATE proof_versions SET content = '{}', semantic_diff = '{}' WHERE id = $1`, [s.originalVersionId]),
      /immutable/, 'erasure is only for items whose recovery window closed',
    );
  });

  it('content hashes are over canonical JSON: key order does not matter', async () => {
    const s = await submit(tenant);
    const a = (await newVersion(tenant, s.proofItemId, { content: { text: 'Same words', title: 'T' }, changeReason: 'first' })).json().data;
    const b = (await newVersion(tenant, s.proofItemId, { content: { title: 'T', text: 'Same words' }, changeReason: 'second' })).json().data;
    assert.equal(a.contentHash, b.contentHash);
  });

  for (const [name, payload, path] of [
    ['a short changeReason', { content: { text: 'x' }, changeReason: 'ab' }, 'changeReason'],
    ['a long changeReason', { content: { text: 'x' }, changeReason: 'a'.repeat(1001) }, 'changeReason'],
    ['an unknown property', { content: { text: 'x' }, changeReason: 'fine', approvalState: 'approved' }, 'approvalState'],
    ['a missing content', { changeReason: 'fine' }, 'content'],
  ] as Array<[string, object, string]>) {
    it(`creating a version refuses ${name}`, async () => {
      const s = await submit(tenant);
      const res = await newVersion(tenant, s.proofItemId, payload);
      assert.equal(res.statusCode, 400);
      assert.ok(res.json().error.details.some((d: { path: string }) => d.path === path), res.body);
    });
  }

  it('a parentVersionId of another item is refused', async () => {
    const a = await submit(tenant);
    const b = await submit(tenant);
    const res = await newVersion(tenant, a.proofItemId, { content: { text: 'x' }, changeReason: 'fine', parentVersionId: b.originalVersionId });
    assert.equal(res.statusCode, 400);
  });

  it('unapproved versions, the original included, need proof:read_private (omitted otherwise)', async () => {
    const s = await submit(tenant);
    const privateList = await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/proof/items/${s.proofItemId}/versions` }));
    assert.equal(privateList.json().data.length, 1);
    const publicList = await call(withKey(tenant.readKey, { method: 'GET', url: `/api/v1/proof/items/${s.proofItemId}/versions` }));
    assert.deepEqual(publicList.json().data, []);
    const approved = await approvedItem(tenant);
    const afterApproval = await call(withKey(tenant.readKey, { method: 'GET', url: `/api/v1/proof/items/${approved.proofItemId}/versions` }));
    assert.deepEqual(afterApproval.json().data.map((v: { id: string }) => v.id), [approved.originalVersionId]);
    const expandedPublic = (await getItem(tenant.readKey, s.proofItemId, '?expand=versions')).json().data.expanded;
    assert.deepEqual(expandedPublic.versions, { data: [], hasMore: false });
    const expandedPrivate = (await getItem(tenant.key, s.proofItemId, '?expand=versions')).json().data.expanded;
    assert.equal(expandedPrivate.versions.data.length, 1);
  });

  it('consent read: ConsentSummary grants, never evidence', async () => {
    const s = await submit(tenant);
    const res = await call(withKey(tenant.readKey, { method: 'GET', url: `/api/v1/proof/items/${s.proofItemId}/consent` }));
    assert.equal(res.statusCode, 200);
    const data = res.json().data;
    assert.equal(data.proofItemId, s.proofItemId);
    assert.equal(data.status, 'granted');
    assert.equal(data.grants.length, 1);
    const g = data.grants[0];
    assert.deepEqual(Object.keys(g).sort(), [
      'approvedVersionId', 'channels', 'customerApprovedWording', 'displayMode', 'geography', 'id', 'identityFields', 'media',
      'paidUseAllowed', 'products', 'receiptHash', 'revokedAt', 'state', 'translationAllowed', 'validUntil',
    ]);
    assert.match(g.receiptHash, /^sha256:/);
    assert.ok(!res.body.includes('127.0.0.1') && !res.body.includes('evidence'));
    const stored = await ctx.dataSource.query('SELECT evidence FROM consent_grants WHERE id = $1', [s.consentGrantId]);
    assert.equal(stored[0].evidence.capturedVia, 'api_submission', 'evidence is kept, only never returned');
  });
});

describe('proof item list and expand', () => {
  let tenant: ProofTenant;
  const list = (query: string, key = tenant.key) => call(withKey(key, { method: 'GET', url: route('/api/v1/proof/items', {}, query) }));
  let approvedId: string;
  let submittedIds: string[];

  before(async () => {
    tenant = await createProofTenant();
    submittedIds = [(await submit(tenant)).proofItemId, (await submit(tenant, submissionBody({ type: 'review' }))).proofItemId];
    approvedId = (await approvedItem(tenant)).proofItemId;
  });

  it('lists newest first and walks pages with the cursor', async () => {
    const all = (await list('')).json();
    assert.deepEqual(all.data.map((i: { id: string }) => i.id), [approvedId, ...submittedIds.slice().reverse()]);
    const first = (await list('?limit=2')).json();
    assert.equal(first.data.length, 2);
    const second = (await list(`?limit=2&cursor=${first.nextCursor}`)).json();
    assert.deepEqual(second.data.map((i: { id: string }) => i.id), [submittedIds[0]]);
    assert.equal(second.nextCursor, null);
  });

  it('filters by status (comma-separated or repeated) and type', async () => {
    const ids = async (q: string) => (await list(q)).json().data.map((i: { id: string }) => i.id);
    assert.deepEqual(await ids('?status=approved'), [approvedId]);
    assert.equal((await ids('?status=approved,submitted')).length, 3);
    assert.equal((await ids('?status=approved&status=submitted')).length, 3);
    assert.deepEqual(await ids('?type=review'), [submittedIds[1]]);
    assert.deepEqual(await ids('?status=published'), [], 'the spec\'s example filter is valid; placements will fill it');
    const bad = await list('?status=live');
    assert.equal(bad.statusCode, 400);
    assert.ok(bad.json().error.details[0].allowed.includes('approved'));
  });

  it('expands versions and consent for the whole page, and caps the page at 50', async () => {
    const res = await list('?expand=versions,consent&limit=100');
    assert.equal(res.statusCode, 200, res.body);
    for (const item of res.json().data) {
      assert.equal(item.expanded.versions.data.length, 1);
      assert.equal(item.expanded.versions.hasMore, false);
      assert.equal(item.expanded.consent.data.proofItemId, item.id);
      assert.equal(item.expanded.consent.data.grants.length, 1);
      assert.equal(item.expanded.consent.hasMore, false);
    }
    const many = await createProofTenant();
    for (let i = 0; i < 51; i++) await submit(many);
    const capped = (await list('?expand=consent&limit=100', many.key)).json();
    assert.equal(capped.data.length, 50);
    assert.ok(capped.nextCursor);
    assert.equal((await list('?limit=100', many.key)).json().data.length, 51);
  });

  it('versions expand keeps the latest 10, oldest first, with hasMore', async () => {
    const s = await submit(tenant);
    for (let i = 0; i < 11; i++) {
      const res = await newVersion(tenant, s.proofItemId, { content: { text: `draft ${i}` }, changeReason: `draft ${i}` });
      assert.equal(res.statusCode, 201);
    }
    const expanded = (await getItem(tenant.key, s.proofItemId, '?expand=versions')).json().data.expanded;
    assert.equal(expanded.versions.hasMore, true);
    assert.deepEqual(expanded.versions.data.map((v: { versionNumber: number }) => v.versionNumber), [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });

  for (const [query, why] of [
    ['?expand=placements', 'an unknown relation'], ['?expand=versions,versions', 'a repeated relation'],
    ['?expand=versions&expand=versions', 'a relation sent twice'], ['?expand=versions,consent,items', 'three relations'],
  ]) {
    it(`expand refuses ${why} with 400 listing the allowed values`, async () => {
      for (const url of [`/api/v1/proof/items${query}`, `/api/v1/proof/items/${approvedId}${query}`]) {
        const res = await call(withKey(tenant.key, { method: 'GET', url }));
        assert.equal(res.statusCode, 400, url);
        assert.equal(errorCode(res), 'VALIDATION_FAILED');
        assert.deepEqual(res.json().error.details[0].allowed, ['versions', 'consent']);
      }
    });
  }

  it('needs proof:read', async () => {
    const t = await createTenant(['service:proof:write']);
    const res = await call(withKey(t.key, { method: 'GET', url: '/api/v1/proof/items' }));
    assert.equal(res.statusCode, 403);
  });

  it('a key approve or reject is always 403 HUMAN_APPROVAL_REQUIRED and changes nothing', async () => {
    const s = await submit(tenant);
    assert.equal((await requestApproval(tenant, s.proofItemId, s.originalVersionId)).statusCode, 200);
    for (const key of [tenant.key, tenant.readKey]) {
      for (const action of ['approve', 'reject']) {
        const res = await call(withKey(key, { method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/${action}` }));
        assert.equal(res.statusCode, 403);
        assert.equal(errorCode(res), 'HUMAN_APPROVAL_REQUIRED');
      }
    }
    const item = (await getItem(tenant.key, s.proofItemId)).json().data.item;
    assert.equal(item.status, 'in_review');
    assert.equal(item.approvedPublicVersionId, null);
  });
});

describe('proof expand query count', () => {
  it('costs one query per relation for the whole page, however many items it holds', async () => {
    const tenant = await createProofTenant();
    for (let i = 0; i < 5; i++) await submit(tenant);
    const { ds: counting, statements } = await countingDataSource();
    try {
      const page = await listItems(counting, tenant.product.id, { statuses: [] }, { limit: 50 }, ['versions', 'consent'], true);
      assert.equal(page.data.length, 5);
      assert.equal(statements.filter((q) => /FROM "?proof_versions"?/.test(q)).length, 1, statements.join('\n'));
      assert.equal(statements.filter((q) => /FROM "?consent_grants"?/.test(q)).length, 1, statements.join('\n'));
    } finally {
      await counting.destroy();
    }
  });
});

import { setFollow } from '../../db/customer-loop/features';
import { createServiceKey } from '../../db/platform/service-keys';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createProduct } from '../../db/platform/tenancy';
import { keyFor, outboxEvents, postSignal, teammate } from '../support/customer-loop';
import { Tenant, asTeammate, call, createTenant, errorCode, sessionFor, withKey } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { ctx } from '../support/root-hooks';

const SCOPES = ['service:signals:read', 'service:signals:write', 'service:threads:read', 'service:features:read'];

interface Candidate {
  type: 'feature' | 'signal';
  id: string;
  title: string;
  score: number;
  matched: string[];
  suggested: boolean;
}

const corpus = JSON.parse(fs.readFileSync(path.join(__dirname, '../fixtures/duplicate-feedback.json'), 'utf8')) as {
  groups: Array<{ id: string; texts: Array<{ title: string; body: string }> }>;
};

async function similar(key: string, kind: 'signals' | 'features', id: string): Promise<Candidate[]> {
  const res = await call(withKey(key, { method: 'GET', url: `/api/v1/${kind}/${id}/similar` }));
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

async function createFeature(t: Tenant, title: string, problem: string, productId = t.product.id): Promise<{ id: string }> {
  const res = await call(teammate(t.owner, 'POST', '/api/workspace/features', { productId, title, problem }));
  assert.equal(res.statusCode, 201, res.body);
  return res.json().data;
}

/** Votes, follows and links of a feature, each with its creation time: what an unmerge must give back exactly. */
async function rowsOf(featureId: string) {
  const q = (sql: string) => ctx.dataSource.query(sql, [featureId]) as Promise<Array<Record<string, unknown>>>;
  return {
    votes: await q('SELECT end_user_id, created_at FROM feature_votes WHERE feature_id = $1 ORDER BY end_user_id'),
    follows: await q('SELECT end_user_id, created_at FROM feature_follows WHERE feature_id = $1 ORDER BY end_user_id'),
    links: await q('SELECT signal_id, linked_by, created_at FROM feature_signal_links WHERE feature_id = $1 ORDER BY signal_id'),
  };
}

describe('customer loop: duplicates (similar, merge, not a duplicate)', function () {
  this.timeout(60_000);
  let tenant: Tenant;
  let writer: string;

  before(async () => {
    tenant = await createTenant(SCOPES);
    writer = await keyFor(tenant, ['service:features:write']);
  });

  it('finds each group of a small corpus: a group mate first, with the answer\'s exact shape', async () => {
    const t = await createTenant(SCOPES);
    const groups = corpus.groups.slice(0, 10).map((g) => ({ id: g.id, texts: g.texts.slice(0, 4) }));
    const posted = new Map<string, string>();
    for (const g of groups) {
      for (const [i, text] of g.texts.entries()) {
        const s = await postSignal(t, { title: text.title, body: text.body, endUserId: `corpus-${g.id}-${i}` });
        posted.set(s.id, g.id);
      }
    }
    for (const [id, group] of posted) {
      const found = await similar(t.key, 'signals', id);
      assert.ok(found.length >= 1 && found.length <= 10, `${group}: ${found.length} candidates`);
      for (const c of found) {
        assert.deepEqual(Object.keys(c).sort(), ['id', 'matched', 'score', 'suggested', 'title', 'type']);
        assert.ok(c.score >= 0 && c.score <= 1);
        assert.equal(c.suggested, c.score >= ctx.config.duplicateThreshold);
        assert.notEqual(c.id, id, 'never the signal itself');
      }
      assert.ok(found.slice(0, 3).some((c) => posted.get(c.id) === group), `${group}: a duplicate among the top 3 of ${JSON.stringify(found.slice(0, 3))}`);
      assert.deepEqual([...found].sort((a, b) => b.score - a.score), found, 'best first');
    }
    // Every group gets a right suggestion for at least one of its texts, at a threshold of 0.5: a product of
    // 40 texts ranks lower than the benchmark's 399 (fewer words in common to count).
    const lenient = await ctx.buildApp({ duplicateThreshold: 0.5 });
    for (const g of groups) {
      const tops: Candidate[] = [];
      for (const [id, group] of posted) {
        if (group !== g.id) continue;
        const res = await call(withKey(t.key, { method: 'GET', url: `/api/v1/signals/${id}/similar` }), lenient);
        tops.push(res.json().data[0]);
      }
      const right = tops.filter((top) => posted.get(top.id) === g.id && top.suggested);
      assert.ok(right.length > 0, `${g.id}: ${JSON.stringify(tops.map((c) => [c.title, c.score]))}`);
      assert.ok(right.every((c) => c.matched.length > 0));
    }
    await lenient.close();
  });

  it('answers features before signals for a signal, and shows the team (never the customer) the thread\'s suggestion', async () => {
    const t = await createTenant(SCOPES);
    const feature = await createFeature(t, 'Dark mode', 'The white background hurts the eyes at night; users want a dark theme.');
    await postSignal(t, { title: 'Night mode please', body: 'Everything is so bright at night, a dark theme would help.', endUserId: 'night-1' });
    const signal = await postSignal(t, { title: 'Dark mode please', body: 'The white background hurts my eyes at night. A dark theme would help a lot.',
      endUserId: 'night-2' });
    const found = await similar(t.key, 'signals', signal.id);
    assert.equal(found[0].type, 'feature');
    assert.equal(found[0].id, feature.id);
    assert.ok(found[0].suggested);
    assert.ok(found[0].matched.includes('dark'));
    assert.ok(found.some((c) => c.type === 'signal'));
    const firstSignal = found.findIndex((c) => c.type === 'signal');
    assert.ok(found.slice(firstSignal).every((c) => c.type === 'signal'), 'features before signals');

    const member = await sessionFor(t.organizationId, 'member');
    const thread = await call(teammate(member, 'GET', `/api/workspace/threads/${signal.threadId}`));
    assert.equal(thread.statusCode, 200, thread.body);
    assert.equal(thread.json().data.duplicateSuggestion.id, feature.id);
    assert.equal(thread.json().data.messages[0].visibility, 'customer');
    const forCustomers = await call(withKey(t.key, { method: 'GET', url: `/api/v1/threads/${signal.threadId}` }));
    assert.equal(forCustomers.statusCode, 200);
    assert.equal('duplicateSuggestion' in forCustomers.json().data, false);

    // The threshold is configuration: at 1 nothing is suggested.
    const strict = await ctx.buildApp({ duplicateThreshold: 1 });
    const none = await call(asTeammate(member, { method: 'GET', url: `/api/workspace/threads/${signal.threadId}` }), strict);
    assert.equal(none.json().data.duplicateSuggestion, null);
    const unsuggested = await call(withKey(t.key, { method: 'GET', url: `/api/v1/signals/${signal.id}/similar` }), strict);
    assert.ok(unsuggested.json().data.every((c: Candidate) => !c.suggested));
    await strict.close();

    // A key sees only the kinds its scopes read: no feature titles for signals:read alone, no customer text for features:read alone.
    const signalsOnly = (await createServiceKey(ctx.dataSource, {
      organizationId: t.organizationId, productId: t.product.id, environment: 'production', scopes: ['service:signals:read'],
    })).secret;
    const seenBySignalsKey = await similar(signalsOnly, 'signals', signal.id);
    assert.ok(seenBySignalsKey.length > 0 && seenBySignalsKey.every((c) => c.type === 'signal'));
    const featuresOnly = (await createServiceKey(ctx.dataSource, {
      organizationId: t.organizationId, productId: t.product.id, environment: 'production', scopes: ['service:features:read'],
    })).secret;
    assert.ok((await similar(featuresOnly, 'features', feature.id)).every((c) => c.type === 'feature'));
    assert.ok((await similar(t.key, 'features', feature.id)).some((c) => c.type === 'signal'), 'a key with both scopes sees signals');

    // Linked evidence is no longer pointed at.
    await call(teammate(t.owner, 'POST', `/api/workspace/features/${feature.id}/signals`, { signalId: signal.id }));
    assert.ok(!(await similar(t.key, 'signals', signal.id)).some((c) => c.id === feature.id));
    assert.ok(!(await similar(t.key, 'features', feature.id)).some((c) => c.id === signal.id));
  });

  it('merges and unmerges: votes once per end user, followers and links moved and restored exactly, feature.merged delivered', async () => {
    const receiver = await Receiver.start();
    try {
      const hook = await call(asTeammate(tenant.owner, { method: 'POST', url: '/api/workspace/webhooks/endpoints',
        payload: { url: receiver.url, subscriptions: ['feature.merged'] } }));
      assert.equal(hook.statusCode, 201, hook.body);
      const merged = await createFeature(tenant, 'Export to Excel', 'Customers want their reports as spreadsheets.');
      const survivor = await createFeature(tenant, 'Export to CSV', 'Customers want their task lists as CSV files.');
      const vote = async (featureId: string, endUserId: string, follow = true) => {
        const res = await call(withKey(writer, { method: 'POST', url: `/api/v1/features/${featureId}/votes`, payload: { endUserId, follow } }));
        assert.equal(res.statusCode, 200, res.body);
      };
      await vote(merged.id, 'only-merged');
      await vote(merged.id, 'both');
      await vote(survivor.id, 'both');
      await vote(survivor.id, 'only-survivor', false);
      await vote(merged.id, 'follower');
      await call(withKey(writer, { method: 'DELETE', url: `/api/v1/features/${merged.id}/votes`, payload: { endUserId: 'follower' } }));
      const [s1, s2, s3] = [await postSignal(tenant, { endUserId: 'a1' }), await postSignal(tenant, { endUserId: 'a2' }),
        await postSignal(tenant, { endUserId: 'a3' })];
      for (const [f, s] of [[merged, s1], [merged, s2], [survivor, s2], [survivor, s3]] as const) {
        assert.equal((await call(teammate(tenant.owner, 'POST', `/api/workspace/features/${f.id}/signals`, { signalId: s.id }))).statusCode, 200);
      }
      const before = { merged: await rowsOf(merged.id), survivor: await rowsOf(survivor.id) };
      const read = async (id: string) => (await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/features/${id}` }))).json().data;
      const scoreBefore = (await read(merged.id)).score;
      assert.equal((await read(merged.id)).mergedInto, null);

      const res = await call(teammate(tenant.owner, 'POST', `/api/workspace/features/${merged.id}/merge`, { intoFeatureId: survivor.id }));
      assert.equal(res.statusCode, 200, res.body);
      const result = res.json().data;
      assert.deepEqual(result.moved, { votes: 1, followers: 2, signals: 1 });
      assert.equal(result.into.voteCount, 3, 'only-merged, both (once), only-survivor');
      assert.equal(result.into.followerCount, 3, 'only-merged, both, follower');
      assert.equal(result.into.signalCount, 3);
      assert.ok(result.into.score > 0);
      assert.deepEqual([result.feature.voteCount, result.feature.followerCount, result.feature.signalCount, result.feature.score], [0, 0, 0, 0]);
      assert.equal((await read(merged.id)).mergedInto, survivor.id);
      assert.equal((await read(survivor.id)).mergedInto, null);
      const listed = (await call(withKey(tenant.key, { method: 'GET', url: '/api/v1/features?limit=100' }))).json().data.map((f: { id: string }) => f.id);
      assert.ok(listed.includes(survivor.id) && !listed.includes(merged.id), 'a merged feature is not listed');
      assert.ok(!(await similar(tenant.key, 'features', survivor.id)).some((c) => c.id === merged.id), 'nor suggested');
      const [event] = (await outboxEvents(tenant.organizationId, 'feature.merged')).filter((e) => e.payload.featureId === merged.id);
      assert.deepEqual(event.payload, {
        featureId: merged.id, intoFeatureId: survivor.id, score: result.into.score, voteCount: 3, followerCount: 3, signalCount: 3,
        moved: { votes: 1, followers: 2, signals: 1 },
      });
      await receiver.waitFor(1);
      const envelope = JSON.parse(receiver.requests[0].body);
      assert.equal(envelope.type, 'feature.merged');
      assert.equal(receiver.requests[0].headers['service-event-type'], 'feature.merged');
      assert.deepEqual(envelope.data, event.payload);

      // Merging again, into a merged feature, or a feature others are merged into: 409.
      const third = await createFeature(tenant, 'Spreadsheet download', 'Download data as a spreadsheet.');
      for (const [from, into] of [[merged.id, third.id], [third.id, merged.id], [survivor.id, third.id]]) {
        const again = await call(teammate(tenant.owner, 'POST', `/api/workspace/features/${from}/merge`, { intoFeatureId: into }));
        assert.equal(again.statusCode, 409, again.body);
        assert.equal(errorCode(again), 'CONFLICT');
      }
      assert.equal((await call(teammate(tenant.owner, 'POST', `/api/workspace/features/${survivor.id}/unmerge`))).statusCode, 409);

      const undone = await call(teammate(tenant.owner, 'POST', `/api/workspace/features/${merged.id}/unmerge`));
      assert.equal(undone.statusCode, 200, undone.body);
      assert.deepEqual({ merged: await rowsOf(merged.id), survivor: await rowsOf(survivor.id) }, before, 'both exactly as they were');
      const restored = await read(merged.id);
      assert.equal(restored.mergedInto, null);
      assert.deepEqual([restored.voteCount, restored.followerCount, restored.signalCount], [2, 3, 2]);
      assert.ok(Math.abs(restored.score - scoreBefore) < 0.01);
      assert.deepEqual([undone.json().data.into.voteCount, undone.json().data.into.signalCount], [2, 2]);
      assert.equal((await outboxEvents(tenant.organizationId, 'feature.unmerged')).filter((e) => e.payload.featureId === merged.id).length, 1);
    } finally {
      await receiver.close();
    }
  });

  it('a vote on a merged feature counts on the surviving one', async () => {
    const a = await createFeature(tenant, 'Gantt chart', 'Plan projects on a timeline.');
    const b = await createFeature(tenant, 'Timeline view', 'Tasks as bars across weeks.');
    assert.equal((await call(teammate(tenant.owner, 'POST', `/api/workspace/features/${a.id}/merge`, { intoFeatureId: b.id }))).statusCode, 200);
    const res = await call(withKey(writer, { method: 'POST', url: `/api/v1/features/${a.id}/votes`, payload: { endUserId: 'late-voter' } }));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.featureId, b.id);
    assert.equal(res.json().data.voteCount, 1);
    // A follow sent to the merged id (an old roadmap link) lands on the surviving feature too.
    const followed = await setFollow(ctx.dataSource, { organizationId: tenant.organizationId, productId: tenant.product.id }, a.id, 'late-follower', true);
    assert.equal(followed.featureId, b.id);
    const rows: Array<{ feature_id: string }> = await ctx.dataSource.query('SELECT feature_id FROM feature_follows WHERE end_user_id = $1 AND product_id = $2',
      ['late-follower', tenant.product.id]);
    assert.deepEqual(rows.map((r) => r.feature_id), [b.id]);
  });

  it('remembers "not a duplicate" for good, both ways', async () => {
    const a = await createFeature(tenant, 'Recurring tasks', 'Tasks that repeat every week, like the Monday report.');
    const b = await createFeature(tenant, 'Repeating tasks', 'Tasks should repeat weekly or monthly on a schedule.');
    assert.ok((await similar(tenant.key, 'features', a.id)).some((c) => c.id === b.id));
    for (let i = 0; i < 2; i++) {
      const res = await call(teammate(tenant.owner, 'POST', `/api/workspace/features/${a.id}/not-duplicate`, { featureId: b.id }));
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().data, { featureId: a.id, notDuplicateOf: b.id });
    }
    assert.ok(!(await similar(tenant.key, 'features', a.id)).some((c) => c.id === b.id));
    assert.ok(!(await similar(tenant.key, 'features', b.id)).some((c) => c.id === a.id));
  });

  it('refuses members, other tenants\' ids, another product, bad bodies and missing scopes', async () => {
    const a = await createFeature(tenant, 'Slack integration', 'Post updates to a Slack channel.');
    const b = await createFeature(tenant, 'Send notifications to Slack', 'Notifications in Slack instead of email.');
    const member = await sessionFor(tenant.organizationId, 'member');
    for (const [url, payload] of [
      [`/api/workspace/features/${a.id}/merge`, { intoFeatureId: b.id }], [`/api/workspace/features/${a.id}/unmerge`, undefined],
      [`/api/workspace/features/${a.id}/not-duplicate`, { featureId: b.id }],
    ] as const) {
      const refused = await call(teammate(member, 'POST', url, payload));
      assert.equal(refused.statusCode, 403, `${url}: ${refused.body}`);
    }

    const other = await createTenant(SCOPES);
    const theirs = await createFeature(other, 'Slack app', 'Create tasks from Slack messages.');
    const theirSignal = await postSignal(other);
    for (const [url, payload] of [
      [`/api/workspace/features/${a.id}/merge`, { intoFeatureId: theirs.id }], [`/api/workspace/features/${theirs.id}/merge`, { intoFeatureId: a.id }],
      [`/api/workspace/features/${theirs.id}/unmerge`, undefined], [`/api/workspace/features/${a.id}/not-duplicate`, { featureId: theirs.id }],
    ] as const) {
      const res = await call(teammate(tenant.owner, 'POST', url, payload));
      assert.equal(res.statusCode, 404, `${url}: ${res.body}`);
      assert.equal(errorCode(res), 'NOT_FOUND');
    }
    for (const url of [`/api/v1/features/${theirs.id}/similar`, `/api/v1/signals/${theirSignal.id}/similar`]) {
      assert.equal((await call(withKey(tenant.key, { method: 'GET', url }))).statusCode, 404);
    }
    assert.ok(!(await similar(other.key, 'features', theirs.id)).some((c) => c.id === a.id || c.id === b.id),
      'another tenant\'s features are never candidates');

    const secondProduct = await createProduct(ctx.dataSource, { organizationId: tenant.organizationId, name: 'Second product' });
    const elsewhere = await createFeature(tenant, 'Slack integration', 'Post updates to a Slack channel.', secondProduct.id);
    const across = await call(teammate(tenant.owner, 'POST', `/api/workspace/features/${a.id}/merge`, { intoFeatureId: elsewhere.id }));
    assert.equal(across.statusCode, 404, across.body);
    assert.ok(!(await similar(tenant.key, 'features', a.id)).some((c) => c.id === elsewhere.id), 'only the same product');

    for (const payload of [{ intoFeatureId: a.id }, {}, { intoFeatureId: b.id, extra: 1 }]) {
      assert.equal((await call(teammate(tenant.owner, 'POST', `/api/workspace/features/${a.id}/merge`, payload))).statusCode, 400);
    }
    assert.equal((await call(teammate(tenant.owner, 'POST', `/api/workspace/features/${a.id}/not-duplicate`, { featureId: a.id }))).statusCode, 400);
    const noRead = await keyFor(tenant, ['service:signals:write']);
    const signal = await postSignal(tenant);
    assert.equal((await call(withKey(noRead, { method: 'GET', url: `/api/v1/signals/${signal.id}/similar` }))).statusCode, 403);
    assert.equal((await call(withKey(noRead, { method: 'GET', url: `/api/v1/features/${a.id}/similar` }))).statusCode, 403);
    assert.equal((await call(teammate(other.owner, 'GET', `/api/workspace/threads/${signal.threadId}`))).statusCode, 404);
  });
});

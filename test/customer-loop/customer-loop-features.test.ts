import assert from 'node:assert/strict';
import { Client as PgClient } from 'pg';
import { Signal } from '../../db/entities';
import { scoreFeature } from '../../db/rules/feature-score';
import { recomputeFeaturesOfSignal } from '../../db/customer-loop/features';
import { INBOX_CHANNEL, InboxNotice } from '../../db/customer-loop/inbox';
import { LOOP_SCOPES, keyFor, outboxEvents, postSignal, teammate } from '../support/customer-loop';
import { Tenant, call, createTenant, endUserToken, errorCode, eventually, sessionFor, withKey } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { route } from '../support/routes';

const SCOPES = [...LOOP_SCOPES.slice(0, 4), 'service:features:read'];
const WRITE = ['service:features:write', 'service:features:read'];

describe('customer loop: features, votes and releases', () => {
  let tenant: Tenant;
  let writer: string;
  const createFeature = async (t: Tenant, extra: Record<string, unknown> = {}) => {
    const res = await call(teammate(t.owner, 'POST', '/api/workspace/features',
      { productId: t.product.id, title: 'Faster export', problem: 'Exports are slow', ...extra }));
    assert.equal(res.statusCode, 201, res.body);
    return res.json().data;
  };
  const voteAs = (key: string, featureId: string, payload: object, method: 'POST' | 'DELETE' = 'POST') =>
    call(withKey(key, { method, url: `/api/v1/features/${featureId}/votes`, payload }));

  before(async () => {
    tenant = await createTenant(SCOPES);
    writer = await keyFor(tenant, WRITE);
  });

  it('scores deterministically and the breakdown adds up term by term', () => {
    const asOf = new Date('2026-06-01T00:00:00.000Z');
    const result = scoreFeature({
      asOf,
      votes: 2,
      // voters a and b, signal authors a and c
      distinctEndUsers: 3,
      signals: [
        { id: 'sig_1', endUserId: 'a', category: 'bug', urgency: 'high', sentiment: 'negative', createdAt: asOf },
        { id: 'sig_2', endUserId: 'c', category: 'review', urgency: 'unknown', sentiment: null, createdAt: new Date(asOf.getTime() - 90 * 86_400_000) },
      ],
    });
    const b = result.breakdown;
    assert.equal(b.votes.points, 2);
    // 2 × bug 1.5 × high 1.5 × negative 1.3 × fresh 1; 2 × review 0.6 × 1 × 1 × one half-life 0.5
    assert.equal(b.signals.items[0].points, 5.85);
    assert.deepEqual(b.signals.items[0].weights, { category: 1.5, urgency: 1.5, sentiment: 1.3, recency: 1 });
    assert.equal(b.signals.items[1].points, 0.6);
    assert.equal(b.signals.items[1].weights.recency, 0.5);
    assert.equal(b.signals.points, 6.45);
    assert.equal(b.distinctEndUsers.count, 3);
    assert.equal(b.distinctEndUsers.points, 1.5);
    assert.equal(result.score, 9.95);
    assert.equal(b.total, result.score);
    assert.deepEqual(scoreFeature({ asOf, votes: 2, distinctEndUsers: 2, signals: [] }), scoreFeature({ asOf, votes: 2, distinctEndUsers: 2, signals: [] }));
  });

  it('workspace creates and edits features; refuses bad bodies, members and another org\'s product', async () => {
    const f = await createFeature(tenant, { publicBoard: true });
    assert.equal(f.state, 'discovery');
    assert.equal(f.score, 0);
    const edited = await call(teammate(tenant.owner, 'PATCH', `/api/workspace/features/${f.id}`, { state: 'planned', title: 'Fast export' }));
    assert.equal(edited.json().data.state, 'planned');
    assert.equal(edited.json().data.title, 'Fast export');
    assert.equal((await call(teammate(tenant.owner, 'PATCH', `/api/workspace/features/${f.id}`, { state: 'shipped' }))).statusCode, 400);
    assert.equal((await call(teammate(tenant.owner, 'PATCH', `/api/workspace/features/${f.id}`, { score: 100 }))).statusCode, 400);
    assert.equal((await call(teammate(tenant.owner, 'POST', '/api/workspace/features', { productId: tenant.product.id, title: '', problem: 'x' }))).statusCode,
      400);
    const member = await sessionFor(tenant.organizationId, 'member');
    assert.equal((await call(teammate(member, 'POST', '/api/workspace/features', { productId: tenant.product.id, title: 'x', problem: 'y' }))).statusCode, 403);
    const other = await createTenant();
    const foreign = await call(teammate(other.owner, 'POST', '/api/workspace/features', { productId: tenant.product.id, title: 'x', problem: 'y' }));
    assert.equal(foreign.statusCode, 404);
    assert.equal((await call(teammate(other.owner, 'PATCH', `/api/workspace/features/${f.id}`, { title: 'mine' }))).statusCode, 404);
  });

  it('linking and unlinking evidence recomputes the score; the signal lists its features', async () => {
    const f = await createFeature(tenant);
    const s = await postSignal(tenant, { kind: 'bug', endUserId: 'evidence-user' });
    const linked = await call(teammate(tenant.owner, 'POST', `/api/workspace/features/${f.id}/signals`, { signalId: s.id }));
    assert.equal(linked.statusCode, 200, linked.body);
    const data = linked.json().data;
    assert.equal(data.signalCount, 1);
    assert.equal(data.scoreBreakdown.signals.items[0].signalId, s.id);
    assert.equal(data.score, data.scoreBreakdown.votes.points + data.scoreBreakdown.signals.points + data.scoreBreakdown.distinctEndUsers.points);
    assert.ok(data.score > 0);
    const signal = (await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/signals/${s.id}` }))).json().data;
    assert.deepEqual(signal.features.map((x: { id: string }) => x.id), [f.id]);
    const readRes = await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/features/${f.id}` }));
    assert.equal(readRes.statusCode, 200, readRes.body);
    const read = readRes.json().data;
    assert.deepEqual(read.evidence.map((e: { signalId: string }) => e.signalId), [s.id]);
    const unlinked = await call(teammate(tenant.owner, 'DELETE', `/api/workspace/features/${f.id}/signals/${s.id}`));
    assert.equal(unlinked.json().data.signalCount, 0);
    assert.equal(unlinked.json().data.score, 0);
    assert.equal((await call(teammate(tenant.owner, 'DELETE', `/api/workspace/features/${f.id}/signals/${s.id}`))).statusCode, 404);
    const other = await createTenant(SCOPES);
    const foreignSignal = await postSignal(other);
    assert.equal((await call(teammate(tenant.owner, 'POST', `/api/workspace/features/${f.id}/signals`, { signalId: foreignSignal.id }))).statusCode, 404);
  });

  it('votes are idempotent per end user, follow unless follow:false, return the new score and emit feature.voted once', async () => {
    const f = await createFeature(tenant);
    const first = await voteAs(writer, f.id, { endUserId: 'voter-1' });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().data.voteCount, 1);
    assert.equal(first.json().data.following, true);
    assert.equal(first.json().data.score, 1.5);
    const again = await voteAs(writer, f.id, { endUserId: 'voter-1' });
    assert.equal(again.json().data.voteCount, 1);
    assert.equal(again.json().data.score, 1.5);
    const second = await voteAs(writer, f.id, { endUserId: 'voter-2', follow: false });
    assert.equal(second.json().data.followerCount, 1);
    assert.equal(second.json().data.score, 3);
    const events = (await outboxEvents(tenant.organizationId, 'feature.voted')).filter((e) => e.payload.featureId === f.id);
    assert.equal(events.length, 2);
    const withdrawn = await voteAs(writer, f.id, { endUserId: 'voter-1' }, 'DELETE');
    assert.equal(withdrawn.json().data.voteCount, 1);
    assert.equal(withdrawn.json().data.following, true, 'withdrawing keeps following unless follow:false');
    for (const payload of [{}, { endUserId: 'x', follow: 'yes' }, { endUserId: 'x', weight: 2 }, { endUserId: '' }]) {
      assert.equal((await voteAs(writer, f.id, payload)).statusCode, 400, JSON.stringify(payload));
    }
  });

  it('concurrent votes of different end users all count', async () => {
    const f = await createFeature(tenant);
    await Promise.all(Array.from({ length: 10 }, (_, i) => voteAs(writer, f.id, { endUserId: `crowd-${i}` })));
    const read = (await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/features/${f.id}` }))).json().data;
    assert.equal(read.voteCount, 10);
    assert.equal(read.score, 10 + 5);
  });

  it('lists by score with state and publicBoard filters; another product\'s feature is 404', async () => {
    const t = await createTenant(SCOPES);
    const low = await createFeature(t, { publicBoard: true });
    const high = await createFeature(t, { state: 'planned' });
    const key = await keyFor(t, WRITE);
    await voteAs(key, high.id, { endUserId: 'u' });
    const ids = async (q: string) => (await call(withKey(t.key, { method: 'GET', url: route('/api/v1/features', {}, q) }))).json()
      .data.map((x: { id: string }) => x.id);
    assert.deepEqual(await ids(''), [high.id, low.id]);
    assert.deepEqual(await ids('?state=planned'), [high.id]);
    assert.deepEqual(await ids('?publicBoard=true'), [low.id]);
    assert.deepEqual(await ids('?limit=1'), [high.id]);
    assert.equal((await call(withKey(t.key, { method: 'GET', url: '/api/v1/features?publicBoard=yes' }))).statusCode, 400);
    assert.equal((await call(withKey(t.key, { method: 'GET', url: '/api/v1/features?cursor=abc' }))).statusCode, 400);
    const res = await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/features/${high.id}` }));
    assert.equal(res.statusCode, 404);
    assert.equal(errorCode(res), 'NOT_FOUND');
    assert.equal((await voteAs(writer, high.id, { endUserId: 'u' })).statusCode, 404);
  });

  it('a release reaches every voter and follower once, emits release.published; a signed user confirms it', async () => {
    const t = await createTenant(SCOPES);
    const key = await keyFor(t, WRITE);
    const a = await createFeature(t);
    const b = await createFeature(t, { title: 'Dark mode' });
    await voteAs(key, a.id, { endUserId: 'both' });
    await voteAs(key, b.id, { endUserId: 'both' });
    await voteAs(key, b.id, { endUserId: 'voter-only', follow: false });
    // Every recipient's stream hears of its item: the notices go out on the inbox channel at commit.
    const listener = new PgClient({ connectionString: ctx.databaseUrl });
    await listener.connect();
    const notices: InboxNotice[] = [];
    listener.on('notification', (m) => {
      const notice = JSON.parse(m.payload ?? '{}') as InboxNotice;
      if (notice.productId === t.product.id) notices.push(notice);
    });
    await listener.query(`LISTEN ${INBOX_CHANNEL}`);
    const res = await call(teammate(t.owner, 'POST', '/api/workspace/releases',
      { productId: t.product.id, title: 'Spring release', featureIds: [a.id, b.id] }));
    assert.equal(res.statusCode, 201, res.body);
    const release = res.json().data;
    assert.equal(release.recipientCount, 2);
    const items: Array<{ id: string; end_user_id: string }> = await ctx.dataSource.query(
      'SELECT id, end_user_id FROM inbox_items WHERE release_id = $1 ORDER BY end_user_id', [release.id]);
    assert.deepEqual(items.map((i) => i.end_user_id), ['both', 'voter-only']);
    await eventually(async () => notices.length >= 2, 5_000);
    await listener.end();
    assert.deepEqual(
      notices.map((n) => [n.endUserId, n.itemId]).sort(),
      items.map((i) => [i.end_user_id, i.id]),
    );
    assert.equal((await outboxEvents(t.organizationId, 'release.published')).length, 1);
    const features = (await call(withKey(key, { method: 'GET', url: '/api/v1/features?state=released' }))).json().data;
    assert.equal(features.length, 2);

    const url = `/api/v1/releases/${release.id}/confirmation`;
    const token = endUserToken(t.product, { sub: 'both' });
    const confirm = await call({ method: 'POST', url, headers: { authorization: `Bearer ${token}` }, payload: { fixed: true } });
    assert.equal(confirm.statusCode, 200, confirm.body);
    assert.equal(confirm.json().data.fixed, true);
    const reused = await call({ method: 'POST', url, headers: { authorization: `Bearer ${token}` }, payload: { fixed: false } });
    assert.equal(reused.statusCode, 401, 'a token acts once: its nonce is consumed');
    const receipts = await outboxEvents(t.organizationId, 'release.receipt_recorded');
    assert.equal(receipts.length, 1);
    assert.deepEqual(receipts[0].payload, { releaseId: release.id, endUserId: 'both', fixed: true });
    const bad = await call({ method: 'POST', url, headers: { authorization: `Bearer ${endUserToken(t.product, { sub: 'both' })}` },
      payload: { fixed: 'yes' } });
    assert.equal(bad.statusCode, 400);
    const foreign = await createTenant();
    const elsewhere = await call({ method: 'POST', url, headers: { authorization: `Bearer ${endUserToken(foreign.product)}` }, payload: { fixed: true } });
    assert.equal(elsewhere.statusCode, 404);
    const keyed = await call(withKey(key, { method: 'POST', url, payload: { fixed: true } }));
    assert.equal(keyed.statusCode, 403);
    const crossOrg = await call(teammate(foreign.owner, 'POST', '/api/workspace/releases', { productId: t.product.id, title: 'x', featureIds: [a.id] }));
    assert.equal(crossOrg.statusCode, 404);
    const wrongFeature = await call(teammate(foreign.owner, 'POST', '/api/workspace/releases',
      { productId: foreign.product.id, title: 'x', featureIds: [a.id] }));
    assert.equal(wrongFeature.statusCode, 404);
    assert.equal((await call(teammate(t.owner, 'POST', '/api/workspace/releases', { productId: t.product.id, title: 'x', featureIds: [] }))).statusCode, 400);
  });

  it('analysis results feed the score of linked features', async () => {
    const f = await createFeature(tenant);
    const s = await postSignal(tenant, { kind: 'ux' });
    await call(teammate(tenant.owner, 'POST', `/api/workspace/features/${f.id}/signals`, { signalId: s.id }));
    const before = (await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/features/${f.id}` }))).json().data.score;
    await ctx.dataSource.getRepository(Signal).update(s.id, { urgency: 'critical' });
    await ctx.dataSource.transaction((em) => recomputeFeaturesOfSignal(em, s.id));
    const after = (await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/features/${f.id}` }))).json().data.score;
    assert.ok(after > before, `${after} > ${before}`);
  });
});

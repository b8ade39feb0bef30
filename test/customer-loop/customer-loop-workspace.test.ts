import assert from 'node:assert/strict';
import { createProduct } from '../../db/platform/tenancy';
import { postSignal, teammate } from '../support/customer-loop';
import { Tenant, call, createTenant, errorCode, sessionFor, withKey } from '../support/fixtures';
import { ctx } from '../support/root-hooks';

const ids = (res: { json: () => { data: Array<{ id: string }> } }) => res.json().data.map((x) => x.id);

describe('customer loop: the workspace reads threads and features (console, issue 28)', function () {
  this.timeout(60_000);
  let t: Tenant;

  before(async () => {
    t = await createTenant(['service:signals:read', 'service:signals:write', 'service:features:read']);
  });

  it('lists the workspace\'s threads by product, state and owner; another workspace sees none of them', async () => {
    const a = await postSignal(t, { endUserId: 'ws-a' });
    const b = await postSignal(t, { endUserId: 'ws-b' });
    const second = await createProduct(ctx.dataSource, { organizationId: t.organizationId, name: 'Second product' });
    const admin = await sessionFor(t.organizationId, 'admin');
    const set = await call(teammate(admin, 'PATCH', `/api/workspace/threads/${a.threadId}`, { state: 'pending', ownerId: admin.id }));
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual([set.json().data.state, set.json().data.ownerId], ['pending', admin.id]);

    const member = await sessionFor(t.organizationId, 'member');
    const list = (query = '') => call(teammate(member, 'GET', `/api/workspace/threads${query}`));
    const all = await list();
    assert.equal(all.statusCode, 200, all.body);
    assert.deepEqual(ids(all).slice(0, 2), [b.threadId, a.threadId], 'newest first');
    assert.deepEqual(ids(await list('?state=pending')), [a.threadId]);
    assert.deepEqual(ids(await list(`?owner=${admin.id}`)), [a.threadId]);
    assert.ok(!ids(await list('?owner=unassigned')).includes(a.threadId));
    assert.ok(ids(await list('?owner=unassigned')).includes(b.threadId));
    assert.deepEqual(ids(await list(`?productId=${t.product.id}&endUserId=ws-b`)), [b.threadId]);
    assert.deepEqual(ids(await list(`?productId=${second.id}`)), []);
    assert.equal((await list('?state=archived')).statusCode, 400);

    const stranger = await createTenant();
    assert.deepEqual(ids(await call(teammate(stranger.owner, 'GET', '/api/workspace/threads'))), []);
    assert.equal((await call(withKey(t.key, { method: 'GET', url: '/api/workspace/threads' }))).statusCode, 403, 'a key is no session');
  });

  it('PATCH sets owner and state (owners and admins), alone or with a promise; members, strangers and empty bodies are refused', async () => {
    const { threadId } = await postSignal(t);
    const url = `/api/workspace/threads/${threadId}`;
    const due = new Date(Date.now() + 3_600_000).toISOString();
    const both = await call(teammate(t.owner, 'PATCH', url, { ownerId: t.owner.id, nextUpdateAt: due }));
    assert.equal(both.statusCode, 200, both.body);
    assert.deepEqual([both.json().data.ownerId, both.json().data.nextUpdateAt], [t.owner.id, due]);
    const cleared = await call(teammate(t.owner, 'PATCH', url, { ownerId: null, state: 'resolved' }));
    assert.deepEqual([cleared.json().data.ownerId, cleared.json().data.state, cleared.json().data.nextUpdateAt], [null, 'resolved', due], 'the promise stays');

    const member = await sessionFor(t.organizationId, 'member');
    assert.equal((await call(teammate(member, 'PATCH', url, { ownerId: member.id }))).statusCode, 403);
    const stranger = await createTenant();
    assert.equal(errorCode(await call(teammate(t.owner, 'PATCH', url, { ownerId: stranger.owner.id }))), 'VALIDATION_FAILED');
    assert.equal((await call(teammate(stranger.owner, 'PATCH', url, { state: 'closed' }))).statusCode, 404);
    for (const body of [{}, { state: 'archived' }, { subject: 'x' }]) {
      assert.equal((await call(teammate(t.owner, 'PATCH', url, body))).statusCode, 400, JSON.stringify(body));
    }
  });

  it('lists features (merged ones apart), reads one with its evidence and its similar candidates, as the key routes do', async () => {
    const create = async (title: string, problem: string) => {
      const res = await call(teammate(t.owner, 'POST', '/api/workspace/features', { productId: t.product.id, title, problem }));
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data.id as string;
    };
    const dark = await create('Dark mode', 'The white background hurts the eyes at night; users want a dark theme.');
    const night = await create('Night theme', 'A dark theme for working at night; the white background is too bright.');
    const signal = await postSignal(t, { title: 'Dark mode please', body: 'The white background hurts my eyes at night.', endUserId: 'ev-1' });
    await call(teammate(t.owner, 'POST', `/api/workspace/features/${dark}/signals`, { signalId: signal.id }));

    const member = await sessionFor(t.organizationId, 'member');
    const one = await call(teammate(member, 'GET', `/api/workspace/features/${dark}`));
    assert.equal(one.statusCode, 200, one.body);
    assert.deepEqual(one.json().data.evidence.map((e: { signalId: string }) => e.signalId), [signal.id]);
    const similar = await call(teammate(member, 'GET', `/api/workspace/features/${dark}/similar`));
    assert.equal(similar.statusCode, 200, similar.body);
    const byKey = await call(withKey(t.key, { method: 'GET', url: `/api/v1/features/${dark}/similar` }));
    assert.deepEqual(similar.json().data, byKey.json().data, 'the same candidates as the key route');
    assert.ok(similar.json().data.some((c: { id: string }) => c.id === night));

    const listed = await call(teammate(member, 'GET', '/api/workspace/features'));
    assert.ok(ids(listed).includes(dark) && ids(listed).includes(night));
    const merged = await call(teammate(t.owner, 'POST', `/api/workspace/features/${night}/merge`, { intoFeatureId: dark }));
    assert.equal(merged.statusCode, 200, merged.body);
    assert.ok(!ids(await call(teammate(member, 'GET', '/api/workspace/features'))).includes(night));
    const apart = await call(teammate(member, 'GET', '/api/workspace/features?merged=true'));
    assert.deepEqual(apart.json().data.map((f: { id: string; mergedInto: string }) => [f.id, f.mergedInto]), [[night, dark]]);

    const stranger = await createTenant();
    for (const url of [`/api/workspace/features/${dark}`, `/api/workspace/features/${dark}/similar`]) {
      assert.equal(errorCode(await call(teammate(stranger.owner, 'GET', url))), 'NOT_FOUND', url);
    }
    assert.deepEqual(ids(await call(teammate(stranger.owner, 'GET', '/api/workspace/features'))), []);
    assert.equal((await call(teammate(member, 'GET', '/api/workspace/features?merged=maybe'))).statusCode, 400);
  });
});

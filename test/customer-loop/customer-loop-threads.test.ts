import assert from 'node:assert/strict';
import { Thread } from '../../db/entities';
import { LOOP_SCOPES, outboxEvents, postSignal, teammate } from '../support/customer-loop';
import { Tenant, call, createTenant, errorCode, sessionFor, settledHandle, withKey } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { threadSlaWorkflowId } from '../../workflows/workflow-ids';
import { route } from '../support/routes';

describe('customer loop: threads', () => {
  let tenant: Tenant;
  const get = (url: string, t: Tenant = tenant) => call(withKey(t.key, { method: 'GET', url }));
  const patch = (id: string, payload: object, t: Tenant = tenant) =>
    call(withKey(t.key, { method: 'PATCH', url: `/api/v1/threads/${id}`, payload }));

  before(async () => {
    tenant = await createTenant(LOOP_SCOPES);
  });

  it('reads a thread with customer-visible messages only; internal notes never leave the workspace', async () => {
    const { threadId } = await postSignal(tenant);
    const member = await sessionFor(tenant.organizationId, 'member');
    const note = await call(teammate(member, 'POST', `/api/workspace/threads/${threadId}/messages`, { body: 'SECRET: churn risk', visibility: 'internal' }));
    assert.equal(note.statusCode, 201, note.body);
    const replyRes = await call(teammate(member, 'POST', `/api/workspace/threads/${threadId}/messages`, { body: 'We are on it.', visibility: 'customer' }));
    assert.equal(replyRes.statusCode, 201);
    const res = await get(`/api/v1/threads/${threadId}`);
    assert.equal(res.statusCode, 200);
    assert.ok(!res.body.includes('SECRET'));
    assert.deepEqual(res.json().data.messages.map((m: { body: string }) => m.body), ['Exports take minutes for big projects.', 'We are on it.']);
    assert.deepEqual(res.json().data.messages.map((m: { authorType: string }) => m.authorType), ['end_user', 'teammate']);
    assert.equal(res.json().data.subject, 'Export is slow');
    const listed = (await get('/api/v1/threads')).json();
    assert.ok(!JSON.stringify(listed).includes('SECRET'));
  });

  it('a customer reply puts an item in the inbox and emits thread.replied; a note does neither', async () => {
    const t = await createTenant(LOOP_SCOPES);
    const { threadId } = await postSignal(t, { endUserId: 'replied-user' });
    await call(teammate(t.owner, 'POST', `/api/workspace/threads/${threadId}/messages`, { body: 'note', visibility: 'internal' }));
    assert.equal((await outboxEvents(t.organizationId, 'thread.replied')).length, 0);
    await call(teammate(t.owner, 'POST', `/api/workspace/threads/${threadId}/messages`, { body: 'Fixed in 2.1', visibility: 'customer' }));
    const events = await outboxEvents(t.organizationId, 'thread.replied');
    assert.equal(events.length, 1);
    assert.equal(events[0].payload.threadId, threadId);
    const items: Array<{ preview: string; thread_id: string }> = await ctx.dataSource.query(
      'SELECT preview, thread_id FROM inbox_items WHERE product_id = $1 AND end_user_id = $2', [t.product.id, 'replied-user']);
    assert.deepEqual(items, [{ preview: 'Fixed in 2.1', thread_id: threadId }]);
  });

  it('refuses bad message bodies and a service key on the workspace endpoint', async () => {
    const { threadId } = await postSignal(tenant);
    const url = `/api/workspace/threads/${threadId}/messages`;
    for (const payload of [{ body: '', visibility: 'customer' }, { body: 'x', visibility: 'public' }, { body: 'x', visibility: 'customer', extra: 1 },
      { body: 'x'.repeat(10_001), visibility: 'customer' }]) {
      const res = await call(teammate(tenant.owner, 'POST', url, payload));
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
    }
    const keyed = await call(withKey(tenant.key, { method: 'POST', url, payload: { body: 'x', visibility: 'customer' } }));
    assert.equal(keyed.statusCode, 403);
  });

  it('PATCH changes state and owner (a teammate of the workspace, or null) and nothing else', async () => {
    const { threadId } = await postSignal(tenant);
    const admin = await sessionFor(tenant.organizationId, 'admin');
    const res = await patch(threadId, { state: 'pending', ownerId: admin.id });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.state, 'pending');
    assert.equal(res.json().data.ownerId, admin.id);
    const cleared = await patch(threadId, { ownerId: null });
    assert.equal(cleared.json().data.ownerId, null);
    assert.equal(cleared.json().data.state, 'pending');
    const stranger = await createTenant();
    assert.equal(errorCode(await patch(threadId, { ownerId: stranger.owner.id })), 'VALIDATION_FAILED');
    for (const body of [{ state: 'archived' }, { subject: 'x' }, {}, { ownerId: 5 }]) {
      const bad = await patch(threadId, body);
      assert.equal(bad.statusCode, 400, JSON.stringify(body));
    }
  });

  it('lists by state, owner (id or unassigned) and endUserId', async () => {
    const t = await createTenant(LOOP_SCOPES);
    const a = await postSignal(t, { endUserId: 'a' });
    const b = await postSignal(t, { endUserId: 'b' });
    await patch(a.threadId, { state: 'resolved', ownerId: t.owner.id }, t);
    const ids = async (query: string) => (await get(route('/api/v1/threads', {}, query), t)).json().data.map((x: { id: string }) => x.id);
    assert.deepEqual(await ids(''), [b.threadId, a.threadId]);
    assert.deepEqual(await ids('?state=resolved'), [a.threadId]);
    assert.deepEqual(await ids(`?owner=${t.owner.id}`), [a.threadId]);
    assert.deepEqual(await ids('?owner=unassigned'), [b.threadId]);
    assert.deepEqual(await ids('?endUserId=b'), [b.threadId]);
    assert.equal((await get('/api/v1/threads?state=archived', t)).statusCode, 400);
  });

  it('another product\'s thread answers 404 for read, patch, reply and promise', async () => {
    const { threadId } = await postSignal(tenant);
    const other = await createTenant(LOOP_SCOPES);
    assert.equal((await get(`/api/v1/threads/${threadId}`, other)).statusCode, 404);
    assert.equal((await patch(threadId, { state: 'closed' }, other)).statusCode, 404);
    assert.equal((await call(teammate(other.owner, 'POST', `/api/workspace/threads/${threadId}/messages`, { body: 'x', visibility: 'customer' }))).statusCode,
      404);
    assert.equal((await call(teammate(other.owner, 'PATCH', `/api/workspace/threads/${threadId}`, { nextUpdateAt: null }))).statusCode, 404);
  });

  it('a promise that passes unanswered escalates once with thread.sla_escalated', async () => {
    const t = await createTenant(LOOP_SCOPES);
    const { threadId } = await postSignal(t);
    const due = new Date(Date.now() + 1_500).toISOString();
    const res = await call(teammate(t.owner, 'PATCH', `/api/workspace/threads/${threadId}`, { nextUpdateAt: due }));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.nextUpdateAt, due);
    const result = await (await settledHandle(threadSlaWorkflowId(threadId))).result();
    assert.equal(result, 'escalated');
    const events = await outboxEvents(t.organizationId, 'thread.sla_escalated');
    assert.equal(events.length, 1);
    assert.equal(events[0].payload.threadId, threadId);
    const thread = await ctx.dataSource.getRepository(Thread).findOneByOrFail({ id: threadId });
    assert.ok(thread.slaEscalatedAt);
  });

  it('a customer reply before the promised time ends the SLA workflow without escalation', async () => {
    const t = await createTenant(LOOP_SCOPES);
    const { threadId } = await postSignal(t);
    const member = await sessionFor(t.organizationId, 'member');
    const due = new Date(Date.now() + 60_000).toISOString();
    assert.equal((await call(teammate(member, 'PATCH', `/api/workspace/threads/${threadId}`, { nextUpdateAt: due }))).statusCode, 403,
      'members may not promise');
    await call(teammate(t.owner, 'PATCH', `/api/workspace/threads/${threadId}`, { nextUpdateAt: due }));
    await call(teammate(member, 'POST', `/api/workspace/threads/${threadId}/messages`, { body: 'Here is the update', visibility: 'customer' }));
    assert.equal(await (await settledHandle(threadSlaWorkflowId(threadId))).result(), 'replied');
    assert.equal((await outboxEvents(t.organizationId, 'thread.sla_escalated')).length, 0);
    const thread = (await get(`/api/v1/threads/${threadId}`, t)).json().data;
    assert.equal(thread.nextUpdateAt, null);
  });

  it('withdrawing a promise ends the workflow; a past or malformed time is refused', async () => {
    const t = await createTenant(LOOP_SCOPES);
    const { threadId } = await postSignal(t);
    const url = `/api/workspace/threads/${threadId}`;
    await call(teammate(t.owner, 'PATCH', url, { nextUpdateAt: new Date(Date.now() + 60_000).toISOString() }));
    const off = await call(teammate(t.owner, 'PATCH', url, { nextUpdateAt: null }));
    assert.equal(off.json().data.nextUpdateAt, null);
    assert.equal(await (await settledHandle(threadSlaWorkflowId(threadId))).result(), 'withdrawn');
    for (const nextUpdateAt of [new Date(Date.now() - 1000).toISOString(), 'tomorrow', '2030-01-01', 5]) {
      assert.equal((await call(teammate(t.owner, 'PATCH', url, { nextUpdateAt }))).statusCode, 400, String(nextUpdateAt));
    }
    assert.equal((await call(teammate(t.owner, 'PATCH', url, {}))).statusCode, 400);
  });
});

import assert from 'node:assert/strict';
import { Tenant, asTeammate, call, errorCode, sessionFor, settledHandle } from '../support/fixtures';
import { route } from '../support/routes';
import { asKey, openRoom, roomsTenant } from '../support/rooms';

type Json = Record<string, any>;

describe('rooms: the workspace\'s approvals for the console', function () {
  this.timeout(120_000);
  let tenant: Tenant;
  let stranger: Tenant;

  before(async () => {
    tenant = await roomsTenant();
    stranger = await roomsTenant();
  });

  /** A promise proposed by a make_promise job: pending, with its approval. */
  const proposePromise = async (who: Tenant, text: string) => {
    const room = await openRoom(who, 'asker');
    const res = await asKey(who, {
      method: 'POST', url: route('/api/v1/rooms/{id}/jobs', { id: room.id }),
      payload: { type: 'make_promise', params: { text, dueAt: new Date(Date.now() + 86_400_000).toISOString() } },
    });
    assert.equal(res.statusCode, 202, res.body);
    await (await settledHandle(`room-job/${res.json().data.id}`)).result();
    const job = (await asKey(who, { method: 'GET', url: route('/api/v1/rooms/{id}/jobs/{jobId}', { id: room.id, jobId: res.json().data.id }) })).json().data;
    return { roomId: room.id, ...(job.result as { promiseId: string; approvalId: string }) };
  };
  const list = (session: { cookie: string; csrfToken: string }, query = '') =>
    call(asTeammate(session, { method: 'GET', url: `/api/workspace/rooms/approvals${query}` }));

  it('lists the workspace\'s approvals newest first, filtered by status, kind and room; to any teammate, never another workspace\'s', async () => {
    const first = await proposePromise(tenant, 'A fix by Friday');
    const second = await proposePromise(tenant, 'A call on Monday');
    const foreign = await proposePromise(stranger, 'Not yours');

    const res = await list(tenant.owner, '?status=pending&kind=promise');
    assert.equal(res.statusCode, 200, res.body);
    const rows = res.json().data as Json[];
    assert.deepEqual(rows.map((a) => [a.id, a.subjectId, a.action.preview, a.status]), [
      [second.approvalId, second.promiseId, 'A call on Monday', 'pending'], [first.approvalId, first.promiseId, 'A fix by Friday', 'pending'],
    ]);
    assert.ok(!rows.some((a) => a.id === foreign.approvalId));
    assert.deepEqual((await list(tenant.owner, `?roomId=${first.roomId}`)).json().data.map((a: Json) => a.id), [first.approvalId]);
    assert.deepEqual((await list(tenant.owner, '?kind=appeal')).json().data, []);

    const member = await sessionFor(tenant.organizationId, 'member');
    assert.equal((await list(member, '?status=pending')).json().data.length, 2, 'a member reads them');
    assert.equal(errorCode(await call(asTeammate(member, { method: 'POST', url: `/api/v1/approvals/${first.approvalId}/approve`, payload: {} }))), 'FORBIDDEN',
      'but does not decide');
    assert.equal(errorCode(await list(tenant.owner, '?status=waiting')), 'VALIDATION_FAILED');
    assert.equal((await asKey(tenant, { method: 'GET', url: '/api/workspace/rooms/approvals' })).statusCode, 403, 'a key is refused');

    const decided = await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/v1/approvals/${first.approvalId}/approve`, payload: {} }));
    assert.equal(decided.statusCode, 200, decided.body);
    assert.deepEqual((await list(tenant.owner, '?status=pending')).json().data.map((a: Json) => a.id), [second.approvalId],
      'decided ones leave the pending list');
    assert.equal((await list(tenant.owner, '?status=approved')).json().data[0].decidedBy.teammateId, tenant.owner.id);
  });
});

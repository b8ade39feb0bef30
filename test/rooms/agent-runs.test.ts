import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { outboxEvents } from '../support/customer-loop';
import { Tenant, asTeammate, call, endUserToken, errorCode, eventually, sessionFor, settledHandle, withKey } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { asKey, asUser, openRoom, roomsTenant, say } from '../support/rooms';
import { route } from '../support/routes';

type Json = Record<string, any>;

describe('rooms: agent runs, approvals and cancellation', function () {
  this.timeout(120_000);
  let tenant: Tenant;

  before(async () => {
    tenant = await roomsTenant();
  });

  /** A marker the fake provider answers with `reply`. */
  const answer = (reply: string) => {
    const marker = `ask-${randomBytes(6).toString('hex')}`;
    ctx.fakeAi.when(marker, { content: `  ${reply}  ` });
    return marker;
  };
  const run = async (runId: string) => (await asKey(tenant, { method: 'GET', url: route('/api/v1/agent-runs/{runId}', { runId }) })).json().data;
  const until = (runId: string, status: string) => eventually(async () => {
    const r = await run(runId);
    return r.status === status ? r : null;
  }, 30_000);
  const invoke = (sub: string | null, roomId: string, payload: Json, alias = 'assistant') => {
    const opts = { method: 'POST' as const, url: `/api/v1/rooms/${roomId}/agents/${alias}/invoke`, payload };
    return sub === null ? asKey(tenant, opts) : asUser(tenant, sub, opts);
  };
  const decide = (approvalId: string, how: 'approve' | 'reject', session = tenant.owner) =>
    call(asTeammate(session, { method: 'POST', url: `/api/v1/approvals/${approvalId}/${how}`, payload: {} }));
  const agentMessages = async (roomId: string) => (await call(asTeammate(tenant.owner,
    { method: 'GET', url: route('/api/workspace/rooms/{id}/events', { id: roomId }, '?after=0') })))
    .json().data.events.filter((e: Json) => e.type === 'room.message.created' && e.data.authorType === 'agent');

  it('a customer\'s assistant run waits for a person, then posts as the agent; only its starter sees it', async () => {
    const room = await openRoom(tenant, 'asker', { visibility: 'product' });
    await say(tenant, 'asker', room.id, 'Exports are slow');
    const marker = answer('Streaming exports are planned.');
    const res = await invoke('asker', room.id, { input: `Summarise ${marker}` });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.headers['service-rooms-version'], '1.5');
    const queued = res.json().data;
    assert.deepEqual([queued.status, queued.visibility, queued.workflowId, queued.startedBy.type],
      ['queued', 'customer', `agent-run/${queued.id}`, 'end_user']);
    const waiting = await until(queued.id, 'awaiting_approval');
    assert.deepEqual(waiting.steps.map((s: Json) => [s.type, s.status]), [['model_call', 'completed'], ['approval', 'in_progress']]);
    assert.equal(waiting.sideEffect.action, 'post_message');
    const approvalId = waiting.sideEffect.approvalId;

    const mine = (await asUser(tenant, 'asker', { method: 'GET', url: '/api/v1/approvals' })).json().data;
    assert.deepEqual(mine.map((a: Json) => [a.id, a.kind, a.status, a.subjectId]), [[approvalId, 'agent_action', 'pending', queued.id]]);
    assert.equal(mine[0].action.preview, 'Streaming exports are planned.');
    await asUser(tenant, 'peer', { method: 'POST', url: `/api/v1/rooms/${room.id}/join` });
    assert.deepEqual((await asUser(tenant, 'peer', { method: 'GET', url: '/api/v1/approvals' })).json().data, []);
    assert.equal((await asUser(tenant, 'peer', { method: 'GET', url: `/api/v1/agent-runs/${queued.id}` })).statusCode, 404, 'not one\'s own run: 404');
    assert.equal((await asUser(tenant, 'peer', { method: 'POST', url: `/api/v1/agent-runs/${queued.id}/cancel` })).statusCode, 404);
    assert.deepEqual((await asUser(tenant, 'peer', { method: 'GET', url: `/api/v1/rooms/${room.id}/agent-runs` })).json().data, []);
    assert.equal((await asUser(tenant, 'asker', { method: 'GET', url: `/api/v1/agent-runs/${queued.id}` })).statusCode, 200);
    assert.equal((await asUser(tenant, 'asker', { method: 'GET', url: `/api/v1/rooms/${room.id}/agent-runs` })).json().data.length, 1);
    const stranger = await roomsTenant();
    assert.equal((await call(withKey(stranger.key, { method: 'GET', url: `/api/v1/agent-runs/${queued.id}` }))).statusCode, 404, 'another tenant');
    assert.deepEqual((await call(withKey(stranger.key, { method: 'GET', url: '/api/v1/approvals' }))).json().data, []);
    const peerLog = (await asUser(tenant, 'peer', { method: 'GET', url: `/api/v1/rooms/${room.id}/events?after=0` })).json().data.events;
    assert.ok(!peerLog.some((e: Json) => e.type === 'run.updated' || e.type === 'approval.requested'), 'another customer\'s run is not in its log');
    const askerLog = (await asUser(tenant, 'asker', { method: 'GET', url: `/api/v1/rooms/${room.id}/events?after=0` })).json().data.events;
    assert.ok(askerLog.some((e: Json) => e.type === 'approval.requested'), 'the starter sees its own run\'s entries');

    const approved = await decide(approvalId, 'approve');
    assert.equal(approved.statusCode, 200, approved.body);
    assert.deepEqual([approved.json().data.status, approved.json().data.decidedBy.teammateId], ['approved', tenant.owner.id]);
    assert.equal(errorCode(await decide(approvalId, 'approve')), 'CONFLICT', 'deciding twice');
    const done = await until(queued.id, 'succeeded');
    assert.ok(done.sideEffect.executedAt);
    const [posted] = await agentMessages(room.id);
    assert.equal(posted.data.messageId, done.sideEffect.resultId);
    assert.equal(posted.data.message.body, 'Streaming exports are planned.', 'the first choice, trimmed');
    assert.equal(posted.data.message.visibility, 'customer');
    const executed = (await outboxEvents(tenant.organizationId, 'room.agent.action_executed')).filter((e) => e.payload.roomId === room.id);
    assert.deepEqual(executed.map((e) => [e.payload.runId, e.payload.alias, e.payload.action, e.payload.resultId]),
      [[queued.id, 'assistant', 'post_message', posted.data.messageId]]);
    const catchUp = (await asUser(tenant, 'asker', { method: 'GET', url: `/api/v1/rooms/${room.id}/catch-up` })).json().data;
    assert.deepEqual(catchUp.runs.map((r: Json) => [r.id, r.status]), [[queued.id, 'succeeded']]);
    assert.equal(errorCode(await asUser(tenant, 'asker', { method: 'POST', url: `/api/v1/agent-runs/${queued.id}/cancel` })), 'CONFLICT',
      'cancelling a succeeded run');
  });

  it('a key\'s internal run needs no approval and stays internal; end users may not ask for one; unknown alias 404', async () => {
    const room = await openRoom(tenant, 'owner-i', { visibility: 'product' });
    const forbidden = await invoke('owner-i', room.id, { input: 'x', visibility: 'internal' });
    assert.equal(errorCode(forbidden), 'FORBIDDEN');
    assert.equal((await invoke(null, room.id, { input: 'x' }, 'oracle')).statusCode, 404);
    for (const payload of [{}, { input: '' }, { input: 'x'.repeat(4001) }, { input: 'x', visibility: 'secret' }]) {
      assert.equal((await invoke(null, room.id, payload)).statusCode, 400);
    }
    const marker = answer('Internal triage note');
    const res = await invoke(null, room.id, { input: marker, visibility: 'internal' });
    assert.equal(res.statusCode, 202, res.body);
    const done = await until(res.json().data.id, 'succeeded');
    assert.equal(done.sideEffect.approvalId, null);
    assert.deepEqual(done.steps.map((s: Json) => s.type), ['model_call', 'side_effect']);
    const [posted] = await agentMessages(room.id);
    assert.equal(posted.data.message.visibility, 'internal');
    const customerLog = JSON.stringify((await asUser(tenant, 'owner-i', { method: 'GET', url: `/api/v1/rooms/${room.id}/events?after=0` })).json().data);
    assert.ok(!customerLog.includes('Internal triage note'));
  });

  it('only a workspace owner or admin decides: keys get HUMAN_APPROVAL_REQUIRED, end users and members FORBIDDEN, nothing changes', async () => {
    const room = await openRoom(tenant, 'decider');
    const res = await invoke('decider', room.id, { input: answer('Draft reply') });
    const waiting = await until(res.json().data.id, 'awaiting_approval');
    const approvalId = waiting.sideEffect.approvalId;
    const byKey = await asKey(tenant, { method: 'POST', url: `/api/v1/approvals/${approvalId}/approve`, payload: {} });
    assert.equal(errorCode(byKey), 'HUMAN_APPROVAL_REQUIRED');
    const byUser = await asUser(tenant, 'decider', { method: 'POST', url: `/api/v1/approvals/${approvalId}/approve`, payload: {} });
    assert.equal(errorCode(byUser), 'FORBIDDEN');
    const member = await sessionFor(tenant.organizationId, 'member');
    assert.equal(errorCode(await decide(approvalId, 'approve', member)), 'FORBIDDEN');
    const noCsrf = await call({ method: 'POST', url: `/api/v1/approvals/${approvalId}/approve`, headers: { cookie: tenant.owner.cookie }, payload: {} });
    assert.equal(errorCode(noCsrf), 'FORBIDDEN');
    const otherAdmin = await sessionFor((await roomsTenant()).organizationId, 'admin');
    assert.equal((await decide(approvalId, 'approve', otherAdmin)).statusCode, 404, 'another workspace');
    assert.equal((await run(waiting.id)).status, 'awaiting_approval', 'nothing changed');
    assert.equal((await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/v1/approvals/${approvalId}/reject`,
      payload: { reason: 'x'.repeat(2001) } }))).statusCode, 400);

    const admin = await sessionFor(tenant.organizationId, 'admin');
    const rejected = await call(asTeammate(admin, { method: 'POST', url: `/api/v1/approvals/${approvalId}/reject`, payload: { reason: 'Not accurate' } }));
    assert.equal(rejected.statusCode, 200, rejected.body);
    assert.deepEqual([rejected.json().data.status, rejected.json().data.note], ['rejected', 'Not accurate']);
    const failed = await run(waiting.id);
    assert.deepEqual([failed.status, failed.lastError.code], ['failed', 'APPROVAL_REJECTED']);
    await (await settledHandle(`agent-run/${waiting.id}`)).result();
    assert.deepEqual(await agentMessages(room.id), [], 'a rejected action never happens');
    assert.equal(errorCode(await decide(approvalId, 'approve')), 'CONFLICT');
    const filtered = (await asKey(tenant, { method: 'GET', url: `/api/v1/approvals?status=rejected&kind=agent_action&roomId=${room.id}` })).json().data;
    assert.deepEqual(filtered.map((a: Json) => a.id), [approvalId]);
  });

  it('cancelling at the moment the approval lands: either the effect committed and cancel is 409, or it never happens', async () => {
    const room = await openRoom(tenant, 'racer', { visibility: 'product' });
    const outcomes = { cancelled: 0, executed: 0 };
    for (let i = 0; i < 16; i += 1) {
      const res = await invoke('racer', room.id, { input: answer(`Reply ${i}`) });
      const waiting = await until(res.json().data.id, 'awaiting_approval');
      // Spread the cancel over the window in which the wake signal and the side-effect step run.
      const [approve, cancel] = await Promise.all([
        decide(waiting.sideEffect.approvalId, 'approve'),
        (async () => {
          await new Promise((r) => setTimeout(r, (i % 8) * 40));
          return asUser(tenant, 'racer', { method: 'POST', url: `/api/v1/agent-runs/${waiting.id}/cancel` });
        })(),
      ]);
      await (await settledHandle(`agent-run/${waiting.id}`)).result();
      const final = await run(waiting.id);
      const posted: unknown[] = await ctx.dataSource.query(
        `SELECT id FROM room_messages WHERE room_id = $1 AND author_type = 'agent' AND body = $2`, [room.id, `Reply ${i}`]);
      if (cancel.statusCode === 200) {
        outcomes.cancelled += 1;
        assert.equal(final.status, 'cancelled', `round ${i}`);
        assert.equal(final.sideEffect.executedAt, null);
        assert.deepEqual(posted, [], `round ${i}: a cancelled run never acts`);
        assert.ok(approve.statusCode === 200 || errorCode(approve) === 'CONFLICT');
      } else {
        outcomes.executed += 1;
        assert.equal(errorCode(cancel), 'CONFLICT', `round ${i}: ${cancel.body}`);
        assert.equal(approve.statusCode, 200);
        assert.equal(final.status, 'succeeded');
        assert.equal(posted.length, 1, `round ${i}: the effect committed once`);
      }
    }
    assert.equal(outcomes.cancelled + outcomes.executed, 16);
  });

  it('cancel: queued or waiting runs end cancelled with their approval; a repeat answers the same', async () => {
    const room = await openRoom(tenant, 'quitter');
    const res = await invoke('quitter', room.id, { input: answer('Never posted') });
    const waiting = await until(res.json().data.id, 'awaiting_approval');
    const cancelled = await asUser(tenant, 'quitter', { method: 'POST', url: `/api/v1/agent-runs/${waiting.id}/cancel` });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(cancelled.json().data.status, 'cancelled');
    const again = await asKey(tenant, { method: 'POST', url: `/api/v1/agent-runs/${waiting.id}/cancel` });
    assert.equal(again.json().data.status, 'cancelled');
    assert.equal(again.json().data.cancelledAt, cancelled.json().data.cancelledAt);
    const approval = (await asKey(tenant, { method: 'GET', url: `/api/v1/approvals?roomId=${room.id}` })).json().data[0];
    assert.equal(approval.status, 'cancelled');
    assert.equal(errorCode(await decide(approval.id, 'approve')), 'CONFLICT');
    await (await settledHandle(`agent-run/${waiting.id}`)).result();
    assert.deepEqual(await agentMessages(room.id), []);
    assert.equal((await asKey(tenant, { method: 'POST', url: '/api/v1/agent-runs/run_unknown000000000/cancel' })).statusCode, 404);
  });

  it('archiving a room and removing a member cancel their runs and pending approvals', async () => {
    const room = await openRoom(tenant, 'archivist');
    await asKey(tenant, { method: 'POST', url: `/api/v1/rooms/${room.id}/members`, payload: { endUserIds: ['helper'] } });
    await asUser(tenant, 'helper', { method: 'POST', url: `/api/v1/rooms/${room.id}/join` });
    const helperRun = await until((await invoke('helper', room.id, { input: answer('Helper reply') })).json().data.id, 'awaiting_approval');
    const helper = (await asUser(tenant, 'helper', { method: 'GET', url: `/api/v1/rooms/${room.id}` })).json().data.membership.principalId;
    await asKey(tenant, { method: 'DELETE', url: `/api/v1/rooms/${room.id}/members/${helper}` });
    assert.equal((await run(helperRun.id)).status, 'cancelled');
    const ownerRun = await until((await invoke('archivist', room.id, { input: answer('Owner reply') })).json().data.id, 'awaiting_approval');
    const archived = await asUser(tenant, 'archivist', { method: 'PATCH', url: `/api/v1/rooms/${room.id}`, payload: { status: 'archived' } });
    assert.equal(archived.statusCode, 200, archived.body);
    assert.equal((await run(ownerRun.id)).status, 'cancelled');
    const approvals = (await asKey(tenant, { method: 'GET', url: `/api/v1/approvals?roomId=${room.id}` })).json().data;
    assert.deepEqual(approvals.map((a: Json) => a.status), ['cancelled', 'cancelled']);
    assert.equal(errorCode(await invoke(null, room.id, { input: 'x' })), 'CONFLICT', 'an archived room takes no runs');
  });

  it('a failing provider fails the run with AI_UNAVAILABLE; no provider at all answers 503 and makes no run', async () => {
    const room = await openRoom(tenant, 'unlucky');
    const marker = `broken-${randomBytes(6).toString('hex')}`;
    ctx.fakeAi.when(marker, { status: 500 });
    const res = await invoke('unlucky', room.id, { input: marker });
    const failed = await until(res.json().data.id, 'failed');
    assert.equal(failed.lastError.code, 'AI_UNAVAILABLE');
    const blank = `blank-${randomBytes(6).toString('hex')}`;
    ctx.fakeAi.when(blank, { content: '   ' });
    const invalid = await until((await invoke('unlucky', room.id, { input: blank })).json().data.id, 'failed');
    assert.equal(invalid.lastError.code, 'AI_INVALID_OUTPUT');
    const app = await ctx.buildApp({ aiBaseUrl: undefined });
    const runRows = async () => (await ctx.dataSource.query('SELECT count(*)::int AS n FROM room_agent_runs WHERE room_id = $1', [room.id]))[0].n;
    const runsBefore = await runRows();
    const none = await call({
      method: 'POST', url: `/api/v1/rooms/${room.id}/agents/assistant/invoke`, payload: { input: 'hello' },
      headers: { authorization: `Bearer ${endUserToken(tenant.product, { sub: 'unlucky' })}` },
    }, app);
    assert.equal(errorCode(none), 'AI_UNAVAILABLE');
    assert.equal((await asKey(tenant, { method: 'GET', url: `/api/v1/rooms/${room.id}/agent-runs` })).json().data.length, 2, 'no run was made');
    assert.equal(await runRows(), runsBefore, 'no run row was stored');
    // The room and the agent are checked before the provider: an unknown alias is 404 with or without one.
    const unknown = await call({
      method: 'POST', url: `/api/v1/rooms/${room.id}/agents/nobody/invoke`, payload: { input: 'hello' },
      headers: { authorization: `Bearer ${endUserToken(tenant.product, { sub: 'unlucky' })}` },
    }, app);
    assert.equal(unknown.statusCode, 404, unknown.body);
    assert.equal(errorCode(unknown), 'NOT_FOUND');
  });

  it('an approval nobody decides expires and fails the run', async () => {
    const app = await ctx.buildApp({ roomApprovalTtlMs: 300 });
    const room = await openRoom(tenant, 'waiter');
    const res = await call({
      method: 'POST', url: `/api/v1/rooms/${room.id}/agents/assistant/invoke`, payload: { input: answer('Too late') },
      headers: { authorization: `Bearer ${endUserToken(tenant.product, { sub: 'waiter' })}` },
    }, app);
    const failed = await until(res.json().data.id, 'failed');
    assert.equal(failed.lastError.code, 'APPROVAL_EXPIRED');
    const [approval] = (await asKey(tenant, { method: 'GET', url: `/api/v1/approvals?roomId=${room.id}` })).json().data;
    assert.equal(approval.status, 'expired');
  });

  it('the canvas: PATCH by key only, with an Idempotency-Key, on the current version; the editor rewrites it after approval', async () => {
    const room = await openRoom(tenant, 'writer');
    const patch = (headers: Json, payload: Json, key = tenant.key) =>
      call(withKey(key, { method: 'PATCH', url: `/api/v1/rooms/${room.id}/canvas`, headers, payload }));
    const idem = () => ({ 'idempotency-key': `canvas-${randomBytes(6).toString('hex')}` });
    assert.equal(errorCode(await patch({}, { content: '# Plan', baseVersion: 0 })), 'VALIDATION_FAILED', 'no Idempotency-Key');
    assert.equal(errorCode(await patch(idem(), { content: '# Plan' })), 'VALIDATION_FAILED', 'no version');
    assert.equal(errorCode(await patch({ ...idem(), 'if-match': '"1"' }, { content: '# Plan', baseVersion: 0 })), 'VALIDATION_FAILED', 'differing versions');
    const userPatch = await asUser(tenant, 'writer', { method: 'PATCH', url: `/api/v1/rooms/${room.id}/canvas`, headers: idem(),
      payload: { content: 'x', baseVersion: 0 } });
    assert.equal(errorCode(userPatch), 'FORBIDDEN');
    const key = idem();
    const first = await patch({ ...key, 'if-match': '"0"' }, { content: '# Plan' });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().data.version, 1);
    assert.equal(first.headers.etag, '"1"');
    const retry = await patch({ ...key, 'if-match': '"0"' }, { content: '# Plan' });
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.deepEqual(retry.json(), first.json(), 'a retry is the same answer, no second version');
    const stale = await patch(idem(), { content: '# Other', baseVersion: 0 });
    assert.equal(errorCode(stale), 'CONFLICT');
    assert.equal(stale.json().error.details.currentVersion, 1);
    const updated = (await outboxEvents(tenant.organizationId, 'room.canvas.updated')).filter((e) => e.payload.roomId === room.id);
    assert.deepEqual(updated.map((e) => [e.payload.version, e.payload.actorType]), [[1, 'key']]);

    const res = await invoke('writer', room.id, { input: answer('# Plan\n\n- stream exports') }, 'editor');
    const waiting = await until(res.json().data.id, 'awaiting_approval');
    assert.equal(waiting.sideEffect.action, 'update_canvas');
    await decide(waiting.sideEffect.approvalId, 'approve');
    const done = await until(waiting.id, 'succeeded');
    assert.equal(done.sideEffect.resultId, '2');
    const canvas = await asUser(tenant, 'writer', { method: 'GET', url: `/api/v1/rooms/${room.id}/canvas` });
    assert.deepEqual([canvas.json().data.version, canvas.json().data.content, canvas.json().data.updatedBy.type], [2, '# Plan\n\n- stream exports', 'agent']);
    const old = await asKey(tenant, { method: 'GET', url: `/api/v1/rooms/${room.id}/canvas?version=1` });
    assert.deepEqual([old.json().data.content, old.headers.etag], ['# Plan', '"1"']);

    const conflicted = await invoke('writer', room.id, { input: answer('# Rewritten') }, 'editor');
    const pending = await until(conflicted.json().data.id, 'awaiting_approval');
    await patch(idem(), { content: '# Meanwhile', baseVersion: 2 });
    await decide(pending.sideEffect.approvalId, 'approve');
    const failed = await until(pending.id, 'failed');
    assert.equal(failed.lastError.code, 'CANVAS_CONFLICT', 'the canvas changed since the model read it');
  });
});

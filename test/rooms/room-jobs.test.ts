import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { runJob } from '../../db/rooms/jobs';
import { outboxEvents } from '../support/customer-loop';
import { Tenant, asTeammate, call, endUserToken, errorCode, sessionFor, settledHandle } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { route } from '../support/routes';
import { asKey, asUser, openRoom, roomsTenant } from '../support/rooms';

type Json = Record<string, any>;

describe('rooms: jobs, promises, solve sessions and handoff', function () {
  this.timeout(120_000);
  let tenant: Tenant;
  let stranger: Tenant;

  before(async () => {
    tenant = await roomsTenant();
    stranger = await roomsTenant();
  });

  const postJob = (roomId: string, type: string, params: unknown, who: Tenant = tenant) =>
    asKey(who, { method: 'POST', url: route('/api/v1/rooms/{id}/jobs', { id: roomId }), payload: { type, params } });
  const getJob = (roomId: string, jobId: string, who: Tenant = tenant) =>
    asKey(who, { method: 'GET', url: route('/api/v1/rooms/{id}/jobs/{jobId}', { id: roomId, jobId }) });
  /** Starts a job and waits for its workflow to end; answers the finished job. */
  const job = async (roomId: string, type: string, params: unknown) => {
    const res = await postJob(roomId, type, params);
    assert.equal(res.statusCode, 202, res.body);
    const queued = res.json().data;
    assert.deepEqual([queued.status, queued.result, queued.error, queued.completedAt], ['queued', null, null, null]);
    await (await settledHandle(`room-job/${queued.id}`)).result();
    return (await getJob(roomId, queued.id)).json().data;
  };
  const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
  const decide = (approvalId: string, how: 'approve' | 'reject', session = tenant.owner) =>
    call(asTeammate(session, { method: 'POST', url: route(`/api/v1/approvals/{approvalId}/${how}`, { approvalId }), payload: {} }));
  const internalLog = async (roomId: string) =>
    (await call(asTeammate(tenant.owner, { method: 'GET', url: route('/api/workspace/rooms/{id}/events', { id: roomId }, '?after=0') }))).json()
      .data.events as Json[];
  const snapshot = async (sub: string, roomId: string) =>
    (await asUser(tenant, sub, { method: 'GET', url: route('/api/v1/rooms/{id}/events', { id: roomId }) })).json().data.snapshot;
  const webhooks = async (type: string, roomId: string) => (await outboxEvents(tenant.organizationId, type)).filter((e) => e.payload.roomId === roomId)
    .map((e) => e.payload);
  const detailsPath = (res: { json: () => Json }) => [...new Set(res.json().error.details.map((d: Json) => d.path))];

  it('refuses bad params at params.x before storing anything, end users, archived rooms and another product\'s ids', async () => {
    const room = await openRoom(tenant, 'bounds');
    const cases: Array<[string, unknown, string]> = [
      ['make_promise', { text: '', dueAt: inSeconds(60) }, 'params.text'],
      ['make_promise', { text: 'x'.repeat(501), dueAt: inSeconds(60) }, 'params.text'],
      ['make_promise', { text: 'Ship it', dueAt: inSeconds(-60) }, 'params.dueAt'],
      ['make_promise', { text: 'Ship it', dueAt: inSeconds(366 * 86_400) }, 'params.dueAt'],
      ['make_promise', { text: 'Ship it', dueAt: 'next week' }, 'params.dueAt'],
      ['make_promise', { text: 'Ship it', dueAt: `${new Date().getUTCFullYear() + 1}-02-30T10:00:00Z` }, 'params.dueAt'],
      ['make_promise', { text: 'Ship it', dueAt: inSeconds(60), extra: 1 }, 'params.extra'],
      ['open_solve_session', { termsVersion: '', termsText: 'Recorded' }, 'params.termsVersion'],
      ['open_solve_session', { termsVersion: 'v'.repeat(51), termsText: 'Recorded' }, 'params.termsVersion'],
      ['open_solve_session', { termsVersion: 'v1', termsText: '' }, 'params.termsText'],
      ['open_solve_session', { termsVersion: 'v1', termsText: 'x'.repeat(10_001) }, 'params.termsText'],
      ['send_release_receipts', {}, 'params.releaseId'],
      ['send_release_receipts', { releaseId: 'rel_unknown0000000000' }, 'params.releaseId'],
      ['complete_promise', { promiseId: 'prm_unknown0000000000' }, 'params.promiseId'],
      ['end_solve_session', { sessionId: 'sol_unknown0000000000' }, 'params.sessionId'],
      ['end_solve_session', { sessionId: 42 }, 'params.sessionId'],
    ];
    for (const [type, params, path] of cases) {
      const res = await postJob(room.id, type, params);
      assert.equal(errorCode(res), 'VALIDATION_FAILED', `${type} ${JSON.stringify(params).slice(0, 80)}: ${res.body}`);
      assert.deepEqual(detailsPath(res), [path]);
    }
    assert.equal(errorCode(await postJob(room.id, 'make_coffee', {})), 'VALIDATION_FAILED');
    assert.equal(errorCode(await asKey(tenant, { method: 'POST', url: `/api/v1/rooms/${room.id}/jobs`, payload: { type: 'make_promise' } })),
      'VALIDATION_FAILED');
    assert.deepEqual(await ctx.dataSource.query('SELECT id FROM room_jobs WHERE room_id = $1', [room.id]), [], 'nothing stored');

    const byUser = await asUser(tenant, 'bounds', { method: 'POST', url: `/api/v1/rooms/${room.id}/jobs`,
      payload: { type: 'make_promise', params: { text: 'x', dueAt: inSeconds(60) } } });
    assert.equal(errorCode(byUser), 'FORBIDDEN');
    assert.equal((await postJob(room.id, 'open_solve_session', { termsVersion: 'v1', termsText: 'x' }, stranger)).statusCode, 404, 'another product\'s room');
    const done = await job(room.id, 'open_solve_session', { termsVersion: 'v1', termsText: 'Recorded for support' });
    assert.equal((await getJob(room.id, done.id, stranger)).statusCode, 404, 'another product\'s key');
    const other = await openRoom(tenant, 'bounds');
    assert.equal((await getJob(other.id, done.id)).statusCode, 404, 'the job of another room');
    assert.equal(errorCode(await asUser(tenant, 'bounds', { method: 'GET', url: `/api/v1/rooms/${room.id}/jobs/${done.id}` })), 'FORBIDDEN');
    const foreignRoom = await openRoom(stranger, 'elsewhere');
    const foreignSession = (await postJob(foreignRoom.id, 'open_solve_session', { termsVersion: 'v1', termsText: 'x' }, stranger)).json().data;
    await (await settledHandle(`room-job/${foreignSession.id}`)).result();
    const sessionId = (await getJob(foreignRoom.id, foreignSession.id, stranger)).json().data.result.sessionId;
    assert.deepEqual(detailsPath(await postJob(room.id, 'end_solve_session', { sessionId })), ['params.sessionId'], 'another product\'s session');

    await asUser(tenant, 'bounds', { method: 'PATCH', url: `/api/v1/rooms/${room.id}`, payload: { status: 'archived' } });
    assert.equal(errorCode(await postJob(room.id, 'open_solve_session', { termsVersion: 'v1', termsText: 'x' })), 'CONFLICT', 'archived room');
  });

  it('a promise: proposed by a job, decided only by a person, watched until due, then missed; completion ends the watch', async () => {
    const room = await openRoom(tenant, 'promisee', { visibility: 'product' });
    const marker = (await asUser(tenant, 'promisee', { method: 'GET', url: `/api/v1/rooms/${room.id}/catch-up` })).json().data.readMarker;
    const made = await job(room.id, 'make_promise', { text: 'A fix by Friday', dueAt: inSeconds(4) });
    assert.equal(made.status, 'succeeded', JSON.stringify(made));
    assert.ok(made.completedAt);
    const { promiseId, approvalId } = made.result;
    assert.match(promiseId, /^prm_/);
    const jobStatuses = (await internalLog(room.id)).filter((e) => e.type === 'job.updated' && e.data.jobId === made.id).map((e) => e.data.status);
    assert.deepEqual(jobStatuses, ['queued', 'running', 'succeeded']);
    const [approval] = (await asKey(tenant, { method: 'GET', url: `/api/v1/approvals?roomId=${room.id}&kind=promise` })).json().data;
    assert.deepEqual([approval.id, approval.status, approval.subjectId, approval.action.preview], [approvalId, 'pending', promiseId, 'A fix by Friday']);
    assert.deepEqual((await snapshot('promisee', room.id)).promises, [], 'a proposal is not shown to customers');
    assert.equal(errorCode(await postJob(room.id, 'complete_promise', { promiseId })), 'CONFLICT', 'not active yet');

    assert.equal(errorCode(await asKey(tenant, { method: 'POST', url: `/api/v1/approvals/${approvalId}/approve`, payload: {} })), 'HUMAN_APPROVAL_REQUIRED');
    assert.equal(errorCode(await asUser(tenant, 'promisee', { method: 'POST', url: `/api/v1/approvals/${approvalId}/approve`, payload: {} })), 'FORBIDDEN');
    assert.equal(errorCode(await decide(approvalId, 'approve', await sessionFor(tenant.organizationId, 'member'))), 'FORBIDDEN');
    assert.equal((await decide(approvalId, 'approve', stranger.owner)).statusCode, 404, 'another workspace');
    assert.deepEqual(await ctx.dataSource.query('SELECT state FROM room_promises WHERE id = $1', [promiseId]), [{ state: 'pending_approval' }],
      'nothing changed');
    assert.deepEqual(await webhooks('room.promise.approved', room.id), []);

    const approved = await decide(approvalId, 'approve');
    assert.equal(approved.statusCode, 200, approved.body);
    const [active] = (await snapshot('promisee', room.id)).promises;
    assert.deepEqual([active.id, active.state, active.text, active.approvalId], [promiseId, 'active', 'A fix by Friday', approvalId]);
    assert.ok(active.approvedAt);
    const [approvedHook] = await webhooks('room.promise.approved', room.id);
    assert.deepEqual([approvedHook.promiseId, approvedHook.dueAt], [promiseId, active.dueAt]);
    assert.equal(await (await settledHandle(`room-promise/${promiseId}`)).result(), 'missed');
    const [missed] = (await snapshot('promisee', room.id)).promises;
    assert.equal(missed.state, 'missed');
    assert.ok(Date.parse(missed.missedAt) >= Date.parse(missed.dueAt), 'not before it was due');
    assert.deepEqual((await webhooks('room.promise.missed', room.id)).map((p) => [p.promiseId, p.dueAt]), [[promiseId, active.dueAt]]);
    const caught = (await asUser(tenant, 'promisee', { method: 'GET', url: `/api/v1/rooms/${room.id}/catch-up` })).json().data;
    assert.equal(caught.readMarker, marker);
    assert.deepEqual(caught.promises.map((p: Json) => [p.id, p.state]), [[promiseId, 'missed']]);
    assert.equal(errorCode(await postJob(room.id, 'complete_promise', { promiseId })), 'CONFLICT', 'a missed promise');

    const kept = await job(room.id, 'make_promise', { text: 'Export fix in a day', dueAt: inSeconds(86_400) });
    await decide(kept.result.approvalId, 'approve');
    const completed = await job(room.id, 'complete_promise', { promiseId: kept.result.promiseId });
    assert.deepEqual([completed.status, completed.result], ['succeeded', { promiseId: kept.result.promiseId }]);
    assert.equal(await (await settledHandle(`room-promise/${kept.result.promiseId}`)).result(), 'completed', 'the watch ends at completion');
    assert.deepEqual((await webhooks('room.promise.completed', room.id)).map((p) => p.promiseId), [kept.result.promiseId]);
    const states = (await snapshot('promisee', room.id)).promises.map((p: Json) => [p.id, p.state]);
    assert.deepEqual(states, [[promiseId, 'missed'], [kept.result.promiseId, 'completed']]);
    assert.equal(errorCode(await postJob(room.id, 'complete_promise', { promiseId: kept.result.promiseId })), 'CONFLICT', 'completed twice');

    const refused = await job(room.id, 'make_promise', { text: 'Everything by tomorrow', dueAt: inSeconds(86_400) });
    const rejected = await decide(refused.result.approvalId, 'reject');
    assert.equal(rejected.json().data.status, 'rejected');
    assert.deepEqual(await ctx.dataSource.query('SELECT state FROM room_promises WHERE id = $1', [refused.result.promiseId]), [{ state: 'rejected' }]);
    assert.ok((await internalLog(room.id)).some((e) => e.type === 'promise.rejected' && e.data.promiseId === refused.result.promiseId));
    assert.equal(errorCode(await decide(refused.result.approvalId, 'approve')), 'CONFLICT');
    assert.equal((await snapshot('promisee', room.id)).promises.length, 2, 'a rejected promise is not shown');
  });

  it('a job\'s effect happens once: running the finished job again writes nothing', async () => {
    const room = await openRoom(tenant, 'once');
    const made = await job(room.id, 'make_promise', { text: 'Once only', dueAt: inSeconds(3600) });
    const headBefore = (await ctx.dataSource.query('SELECT head_seq FROM rooms WHERE id = $1', [room.id]))[0].head_seq;
    const jobRow = () => ctx.dataSource.query('SELECT status, result, error, completed_at FROM room_jobs WHERE id = $1', [made.id]);
    const jobBefore = await jobRow();
    assert.equal(await runJob(ctx.dataSource, made.id), 'succeeded');
    assert.deepEqual(await jobRow(), jobBefore, 'the job row is not written again');
    assert.equal((await ctx.dataSource.query('SELECT count(*)::int AS n FROM room_promises WHERE room_id = $1', [room.id]))[0].n, 1);
    assert.equal((await ctx.dataSource.query('SELECT head_seq FROM rooms WHERE id = $1', [room.id]))[0].head_seq, headBefore);
  });

  it('a job whose subject changed since it was accepted fails with its error, once (docs/rooms.md#room-states, ' +
    'docs/rooms.md#jobs-promises-solve-sessions-and-handoff)', async () => {
    const room = await openRoom(tenant, 'changer');
    const made = await job(room.id, 'make_promise', { text: 'Fixed by Friday', dueAt: inSeconds(3600) });
    assert.equal((await decide(made.result.approvalId, 'approve')).statusCode, 200);
    const completed = await job(room.id, 'complete_promise', { promiseId: made.result.promiseId });
    assert.equal(completed.status, 'succeeded');
    // The same job as if it had not run yet, its subject changed meanwhile.
    const requeue = () => ctx.dataSource.query(
      `UPDATE room_jobs SET status = 'queued', result = NULL, error = NULL, completed_at = NULL WHERE id = $1`, [completed.id]);
    const failure = async (message: string) => {
      assert.equal(await runJob(ctx.dataSource, completed.id), 'failed');
      const failed = (await getJob(room.id, completed.id)).json().data;
      assert.deepEqual([failed.status, failed.result, failed.error], ['failed', null, { code: 'CONFLICT', message }]);
      assert.ok(failed.completedAt);
      assert.equal(await runJob(ctx.dataSource, completed.id), 'failed', 'a finished job is not run again');
    };
    await requeue();
    await ctx.dataSource.query(`UPDATE room_promises SET state = 'missed' WHERE id = $1`, [made.result.promiseId]);
    await failure('the promise is no longer active');
    await requeue();
    await ctx.dataSource.query(`UPDATE rooms SET status = 'archived' WHERE id = $1`, [room.id]);
    await failure('the room is archived');
  });

  it('release receipts: an inbox item naming the room to each joined end user, once per user', async () => {
    const room = await openRoom(tenant, 'shipper', { visibility: 'product' });
    await asUser(tenant, 'watcher', { method: 'POST', url: `/api/v1/rooms/${room.id}/join` });
    await asKey(tenant, { method: 'POST', url: `/api/v1/rooms/${room.id}/members`, payload: { endUserIds: ['invitee'] } });
    const feature = (await call(asTeammate(tenant.owner, { method: 'POST', url: '/api/workspace/features',
      payload: { productId: tenant.product.id, title: 'Faster export', problem: 'Slow' } }))).json().data;
    const release = (await call(asTeammate(tenant.owner, { method: 'POST', url: '/api/workspace/releases',
      payload: { productId: tenant.product.id, title: 'Spring', featureIds: [feature.id] } }))).json().data;
    const foreignFeature = (await call(asTeammate(stranger.owner, { method: 'POST', url: '/api/workspace/features',
      payload: { productId: stranger.product.id, title: 'x', problem: 'y' } }))).json().data;
    const foreignRelease = (await call(asTeammate(stranger.owner, { method: 'POST', url: '/api/workspace/releases',
      payload: { productId: stranger.product.id, title: 'x', featureIds: [foreignFeature.id] } }))).json().data;
    assert.deepEqual(detailsPath(await postJob(room.id, 'send_release_receipts', { releaseId: foreignRelease.id })), ['params.releaseId'],
      'another product\'s release');

    const first = await job(room.id, 'send_release_receipts', { releaseId: release.id });
    assert.deepEqual([first.status, first.result], ['succeeded', { recipientCount: 2 }]);
    const inbox = (await asUser(tenant, 'watcher', { method: 'GET', url: '/api/v1/inbox' })).json().data.items;
    assert.deepEqual(inbox.map((i: Json) => [i.releaseId, i.roomId]), [[release.id, room.id]]);
    assert.equal((await asUser(tenant, 'invitee', { method: 'GET', url: '/api/v1/inbox' })).json().data.items.length, 0, 'invited, not joined');
    const second = await job(room.id, 'send_release_receipts', { releaseId: release.id });
    assert.deepEqual(second.result, { recipientCount: 0 }, 'nobody hears twice');
    await asUser(tenant, 'invitee', { method: 'POST', url: `/api/v1/rooms/${room.id}/join` });
    const third = await job(room.id, 'send_release_receipts', { releaseId: release.id });
    assert.deepEqual(third.result, { recipientCount: 1 });
    assert.equal((await asUser(tenant, 'watcher', { method: 'GET', url: '/api/v1/inbox' })).json().data.items.length, 1);
    const hooks = await webhooks('room.release.receipt_sent', room.id);
    assert.deepEqual(hooks.map((h) => [h.jobId, h.releaseId, h.recipientCount]),
      [[first.id, release.id, 2], [second.id, release.id, 0], [third.id, release.id, 1]]);
  });

  it('solve sessions: opened by a job, joined with consent to its exact terms, ended by a job', async () => {
    const room = await openRoom(tenant, 'solver', { visibility: 'product' });
    const terms = 'This session is recorded for support.';
    const sha = createHash('sha256').update(terms, 'utf8').digest('hex');
    const opened = await job(room.id, 'open_solve_session', { termsVersion: '2026-11', termsText: terms });
    const { sessionId } = opened.result;
    const [session] = (await snapshot('solver', room.id)).solveSessions;
    assert.deepEqual([session.id, session.state, session.recordingTerms, session.participantCount],
      [sessionId, 'open', { version: '2026-11', text: terms, sha256: sha }, 0]);
    const join = (sub: string, consent: Json, id = sessionId, roomId = room.id) =>
      asUser(tenant, sub, { method: 'POST', url: `/api/v1/rooms/${roomId}/solve-sessions/${id}/join`, payload: { consent } });
    const good = { termsVersion: '2026-11', termsSha256: sha, accepted: true };

    assert.equal(errorCode(await join('outsider', good)), 'FORBIDDEN', 'not joined to the room');
    assert.equal(errorCode(await join('solver', { ...good, accepted: false })), 'VALIDATION_FAILED');
    assert.equal(errorCode(await join('solver', { termsVersion: '2026-11', termsSha256: sha })), 'VALIDATION_FAILED');
    assert.equal(errorCode(await join('solver', { ...good, termsSha256: 'abc' })), 'VALIDATION_FAILED');
    assert.equal(errorCode(await join('solver', { ...good, termsSha256: 'f'.repeat(64) })), 'CONSENT_INVALID');
    assert.equal(errorCode(await join('solver', { ...good, termsVersion: '2026-10' })), 'CONSENT_INVALID');
    assert.equal((await join('solver', good, 'sol_unknown0000000000')).statusCode, 404);
    const joined = await join('solver', good);
    assert.equal(joined.statusCode, 200, joined.body);
    const body = joined.json().data;
    assert.deepEqual([body.sessionId, body.consent.termsVersion, body.consent.termsSha256, body.consent.accepted], [sessionId, '2026-11', sha, true]);
    assert.ok(body.consent.id && body.consent.acceptedAt && body.joinedAt && body.principalId);
    assert.deepEqual((await join('solver', good)).json().data, body, 'a repeat answers the same');
    assert.equal((await snapshot('solver', room.id)).solveSessions[0].participantCount, 1);
    const foreign = await call({
      method: 'POST', url: `/api/v1/rooms/${room.id}/solve-sessions/${sessionId}/join`, payload: { consent: good },
      headers: { authorization: `Bearer ${endUserToken(stranger.product, { sub: 'solver' })}` },
    });
    assert.equal(foreign.statusCode, 404, 'another product\'s end user');
    const log = (await asUser(tenant, 'solver', { method: 'GET', url: `/api/v1/rooms/${room.id}/events?after=0` })).json().data.events.map((e: Json) => e.type);
    assert.ok(log.includes('solve_session.opened') && log.includes('solve_session.joined'), 'customer-visible entries');

    const ended = await job(room.id, 'end_solve_session', { sessionId });
    assert.deepEqual([ended.status, ended.result], ['succeeded', { sessionId }]);
    assert.deepEqual((await snapshot('solver', room.id)).solveSessions, []);
    await asUser(tenant, 'late', { method: 'POST', url: `/api/v1/rooms/${room.id}/join` });
    assert.equal(errorCode(await join('late', good)), 'CONFLICT', 'an ended session');
    assert.equal((await join('solver', good)).statusCode, 200, 'a repeat still answers the first join');
    assert.equal(errorCode(await postJob(room.id, 'end_solve_session', { sessionId })), 'CONFLICT', 'ended twice');
    assert.equal((await internalLog(room.id)).filter((e) => e.type === 'solve_session.ended').length, 1);
  });

  it('handoff: one active at a time, a named teammate joins, agents answer 409 meanwhile; ended by a key or its requester', async () => {
    const room = await openRoom(tenant, 'handy', { visibility: 'product' });
    await asUser(tenant, 'bystander', { method: 'POST', url: `/api/v1/rooms/${room.id}/join` });
    const url = `/api/v1/rooms/${room.id}/handoff`;
    const teammate = await sessionFor(tenant.organizationId, 'member');
    assert.equal((await asKey(tenant, { method: 'GET', url })).json().data, null);
    assert.equal(errorCode(await asUser(tenant, 'handy', { method: 'POST', url, payload: { teammateId: teammate.id } })), 'FORBIDDEN');
    assert.equal(errorCode(await asUser(tenant, 'nomember', { method: 'GET', url })), 'FORBIDDEN');
    const unknown = await asKey(tenant, { method: 'POST', url, payload: { teammateId: stranger.owner.id } });
    assert.deepEqual([errorCode(unknown), detailsPath(unknown)], ['VALIDATION_FAILED', ['teammateId']]);
    assert.equal(errorCode(await asKey(tenant, { method: 'POST', url, payload: { reason: 'x'.repeat(501) } })), 'VALIDATION_FAILED');
    assert.equal((await asKey(stranger, { method: 'GET', url })).statusCode, 404, 'another product\'s room');

    const made = await asKey(tenant, { method: 'POST', url, payload: { reason: 'Billing question', teammateId: teammate.id } });
    assert.equal(made.statusCode, 201, made.body);
    const handoff = made.json().data;
    assert.deepEqual([handoff.state, handoff.teammateId, handoff.reason, handoff.requestedBy.type, handoff.endedAt],
      ['active', teammate.id, 'Billing question', 'key', null]);
    const members = (await asKey(tenant, { method: 'GET', url: `/api/v1/rooms/${room.id}/members` })).json().data;
    assert.deepEqual(members.filter((m: Json) => m.type === 'teammate').map((m: Json) => [m.teammateId, m.role, m.visibility, m.state]),
      [[teammate.id, 'teammate', 'internal', 'joined']]);
    assert.equal(errorCode(await asUser(tenant, 'handy', { method: 'POST', url, payload: {} })), 'CONFLICT', 'one active');
    assert.equal(errorCode(await asUser(tenant, 'handy', { method: 'POST', url: `/api/v1/rooms/${room.id}/agents/assistant/invoke`,
      payload: { input: 'Hi' } })), 'CONFLICT');
    assert.deepEqual((await asUser(tenant, 'handy', { method: 'GET', url })).json().data, handoff);
    assert.deepEqual((await snapshot('handy', room.id)).handoff, handoff);
    assert.equal(errorCode(await asUser(tenant, 'handy', { method: 'DELETE', url })), 'FORBIDDEN', 'not its requester');

    const ended = await asKey(tenant, { method: 'DELETE', url });
    assert.equal(ended.statusCode, 200, ended.body);
    assert.deepEqual([ended.json().data.state, ended.json().data.endedBy.type], ['ended', 'key']);
    assert.equal((await asKey(tenant, { method: 'DELETE', url })).statusCode, 404, 'none active');

    const mine = await asUser(tenant, 'handy', { method: 'POST', url, payload: { reason: 'Need a person' } });
    assert.equal(mine.statusCode, 201, mine.body);
    assert.deepEqual([mine.json().data.requestedBy.type, mine.json().data.teammateId], ['end_user', null]);
    assert.equal(errorCode(await asUser(tenant, 'bystander', { method: 'DELETE', url })), 'FORBIDDEN');
    const byRequester = await asUser(tenant, 'handy', { method: 'DELETE', url });
    assert.equal(byRequester.statusCode, 200, byRequester.body);
    assert.deepEqual(byRequester.json().data.endedBy, mine.json().data.requestedBy);
    assert.equal((await asKey(tenant, { method: 'GET', url })).json().data.id, mine.json().data.id, 'the latest when none is active');
    assert.equal((await asUser(tenant, 'handy', { method: 'POST', url: `/api/v1/rooms/${room.id}/agents/assistant/invoke`,
      payload: { input: 'Hi' } })).statusCode, 202);

    const updates = await webhooks('room.updated', room.id);
    assert.deepEqual(updates.map((u) => u.changed), [['handoff'], ['handoff'], ['handoff'], ['handoff']]);
    const log = (await asUser(tenant, 'bystander', { method: 'GET', url: `/api/v1/rooms/${room.id}/events?after=0` })).json().data.events.map((e: Json) =>
      e.type);
    assert.deepEqual(log.filter((t: string) => t.startsWith('handoff.')), ['handoff.requested', 'handoff.ended', 'handoff.requested', 'handoff.ended']);
  });
});

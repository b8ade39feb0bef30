import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { InjectOptions } from 'fastify';
import { createRoomMaintenanceActivities } from '../../activities/rooms/room-maintenance-activities';
import { ROOMS_PATHS } from '../../api/rooms/room-caller';
import { principalIdOf } from '../../db/rules/room-rules';
import { maintenanceWorkflow } from '../../workflows/platform/maintenance-workflow';
import { Tenant, asTeammate, call, endUserToken, errorCode, eventually, withinOneMinuteWindow } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { asKey, asUser, openRoom, roomsTenant, say } from '../support/rooms';

type Json = Record<string, any>;

describe('rooms: operations (compaction, end-user rate limit, identity merge, contract checks)', function () {
  this.timeout(120_000);
  let tenant: Tenant;

  before(async () => {
    tenant = await roomsTenant();
  });

  const events = (sub: string, roomId: string, after: number) =>
    asUser(tenant, sub, { method: 'GET', url: `/api/v1/rooms/${roomId}/events?after=${after}` });
  const compactedThrough = async (roomId: string) =>
    Number((await ctx.dataSource.query('SELECT compacted_through FROM rooms WHERE id = $1', [roomId]))[0].compacted_through);
  const storedSeqs = async (roomId: string) =>
    (await ctx.dataSource.query('SELECT seq FROM room_events WHERE room_id = $1 ORDER BY seq', [roomId])).map((r: Json) => Number(r.seq));

  describe('event compaction', () => {
    it('the maintenance workflow removes events older than the retention; a reader behind them gets the snapshot', async () => {
      const room = await openRoom(tenant, 'keeper');
      for (const body of ['one', 'two', 'three']) await say(tenant, 'keeper', room.id, body);
      // Seq 1-3 are older than the 30-day default retention; 4 is not.
      await ctx.dataSource.query(
        `UPDATE room_events SET created_at = now() - interval '40 days' WHERE room_id = $1 AND seq <= 3`, [room.id]);
      const handle = await ctx.temporal.workflow.start(maintenanceWorkflow, {
        workflowId: `maintenance-test/${room.id}`, taskQueue: ctx.config.taskQueue, args: [{ intervalMs: 200 }],
      });
      try {
        await eventually(async () => (await compactedThrough(room.id)) === 3, 30_000);
      } finally {
        await handle.terminate('test done');
      }
      assert.deepEqual(await storedSeqs(room.id), [4], 'only the events within the retention are kept');

      const behind = (await events('keeper', room.id, 2)).json().data;
      assert.equal(behind.limited, true, 'after < compactedThrough answers the snapshot');
      assert.deepEqual(behind.events, []);
      assert.equal(behind.seq, 4);
      assert.deepEqual(behind.snapshot.messages.map((m: Json) => m.body), ['one', 'two', 'three'], 'messages outlive their events');
      const caughtUp = (await events('keeper', room.id, 3)).json().data;
      assert.equal(caughtUp.limited, false);
      assert.deepEqual(caughtUp.events.map((e: Json) => e.seq), [4]);
    });

    it('with a tiny retention the whole log goes; seq carries on from headSeq and new events read normally', async () => {
      const room = await openRoom(tenant, 'tiny');
      await say(tenant, 'tiny', room.id, 'before');
      await eventually(async () => {
        const [row] = await ctx.dataSource.query(`SELECT max(created_at) < now() - interval '10 milliseconds' AS old FROM room_events WHERE room_id = $1`,
          [room.id]);
        return row.old;
      });
      // Called directly, so it is done when it returns: it compacts every room of this scratch database, and
      // the rooms of later tests are all made afterwards.
      const activities = createRoomMaintenanceActivities({ dataSource: ctx.dataSource, config: { ...ctx.config, roomEventRetentionMs: 1 } });
      const done = await activities.compactRoomEvents();
      assert.ok(done.rooms >= 1 && done.events >= 2, JSON.stringify(done));
      assert.equal(await compactedThrough(room.id), 2);
      assert.deepEqual(await storedSeqs(room.id), []);
      assert.deepEqual(await activities.compactRoomEvents().then(() => storedSeqs(room.id)), [], 'a repeat finds nothing more');

      const after = await say(tenant, 'tiny', room.id, 'after');
      assert.equal(after.seq, 3, 'seq continues from headSeq');
      const fresh = (await events('tiny', room.id, 2)).json().data;
      assert.deepEqual([fresh.limited, fresh.events.map((e: Json) => e.seq)], [false, [3]], 'after = compactedThrough is not behind');
      assert.equal((await events('tiny', room.id, 1)).json().data.limited, true);
    });
  });

  describe('per-end-user rate limit', () => {
    it('limits each end user on Rooms paths (rooms, agent-runs, approvals) with 429 RATE_LIMITED and retry-after; others are not counted', async () => {
      const LIMIT = 3;
      const app = await ctx.buildApp({ rateLimitPerMinute: LIMIT });
      const as = (sub: string, opts: InjectOptions) =>
        call({ ...opts, headers: { authorization: `Bearer ${endUserToken(tenant.product, { sub })}` } }, app);
      const room = await openRoom(tenant, `host-${randomBytes(4).toString('hex')}`);
      // Keep the burst inside one minute window.
      await withinOneMinuteWindow();
      const busy = `busy-${randomBytes(4).toString('hex')}`;
      const remaining: string[] = [];
      const answers: number[] = [];
      for (const [method, url] of [
        ['GET', '/api/v1/approvals'], ['GET', '/api/v1/agent-runs/run_unknown000000000'], ['POST', `/api/v1/rooms/${room.id}/members`],
      ] as const) {
        const res = await as(busy, { method, url, payload: method === 'POST' ? { endUserIds: ['x'] } : undefined });
        answers.push(res.statusCode);
        remaining.push(String(res.headers['x-ratelimit-remaining']));
      }
      assert.deepEqual(answers, [200, 404, 403], 'an end user on a key-only path is refused, and counted');
      assert.deepEqual(remaining, ['2', '1', '0'], 'one window across the Rooms paths');
      const limited = await as(busy, { method: 'GET', url: '/api/v1/rooms' });
      assert.equal(limited.statusCode, 429);
      assert.equal(errorCode(limited), 'RATE_LIMITED');
      const retryAfter = Number(limited.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
      assert.equal(limited.headers['service-rooms-version'], '1.5');
      const window: Array<{ n: number }> = await ctx.dataSource.query(
        `SELECT coalesce(sum(count), 0)::int AS n FROM rate_limit_windows
          WHERE (key_id = $1 OR key_id LIKE $1 || '#%') AND window_start = date_trunc('minute', now())`,
        [principalIdOf(tenant.product.id, 'end_user', busy)]);
      assert.equal(window[0].n, LIMIT, 'the refusal counted nothing, in the end user\'s own window rows');

      assert.equal((await as(`calm-${randomBytes(4).toString('hex')}`, { method: 'GET', url: '/api/v1/rooms' })).statusCode, 200,
        'another end user has its own window');
      assert.equal((await as(busy, { method: 'GET', url: '/api/v1/installation' })).statusCode, 200, 'outside Rooms an end user is not limited');
    });
  });

  describe('identity merge', () => {
    it('carries the anonymous end user\'s rooms, messages, runs and approvals onto the signed principal; a shared room keeps one record', async () => {
      const anon = `anon_${randomBytes(12).toString('hex')}`;
      const signed = `signed-${randomBytes(4).toString('hex')}`;
      const anonPrincipal = principalIdOf(tenant.product.id, 'end_user', anon);
      const signedPrincipal = principalIdOf(tenant.product.id, 'end_user', signed);

      const own = await openRoom(tenant, anon, { title: 'Anonymous idea' });
      const note = await say(tenant, anon, own.id, 'Written before signing in');
      const marker = `merge-${randomBytes(6).toString('hex')}`;
      ctx.fakeAi.when(marker, { content: 'An answer' });
      const invoked = await asUser(tenant, anon, { method: 'POST', url: `/api/v1/rooms/${own.id}/agents/assistant/invoke`, payload: { input: marker } });
      assert.equal(invoked.statusCode, 202, invoked.body);
      const runId = invoked.json().data.id;
      await eventually(async () => (await asKey(tenant, { method: 'GET', url: `/api/v1/agent-runs/${runId}` })).json().data.status === 'awaiting_approval',
        30_000);

      // Both in one room: the signed user owns it, the anonymous one joined and read further.
      const shared = await openRoom(tenant, signed, { visibility: 'product' });
      await asUser(tenant, anon, { method: 'POST', url: `/api/v1/rooms/${shared.id}/join` });
      const hello = await say(tenant, signed, shared.id, 'Hello');
      for (const who of [signed, anon]) {
        const reacted = await asUser(tenant, who, { method: 'POST', url: `/api/v1/rooms/${shared.id}/messages/${hello.id}/reactions`,
          payload: { emoji: '👍' } });
        assert.equal(reacted.statusCode, 200, reacted.body);
      }
      const joinedHead = (await asUser(tenant, anon, { method: 'GET', url: `/api/v1/rooms/${shared.id}` })).json().data.headSeq;
      await asUser(tenant, anon, { method: 'PATCH', url: `/api/v1/rooms/${shared.id}`, payload: { readMarker: joinedHead } });
      // Both in a third user's private room: the signed user only invited, the anonymous one joined.
      const hosted = await openRoom(tenant, 'host');
      await asKey(tenant, { method: 'POST', url: `/api/v1/rooms/${hosted.id}/members`, payload: { endUserIds: [anon, signed] } });
      await asUser(tenant, anon, { method: 'POST', url: `/api/v1/rooms/${hosted.id}/join` });

      const proof = (await asUser(tenant, anon, { method: 'GET', url: '/api/v1/identity/anonymous-proof' })).json().data.anonymousProof;
      const res = await asUser(tenant, signed, { method: 'POST', url: '/api/v1/identity/merge', payload: { anonymousId: anon, anonymousProof: proof } });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(
        [res.json().data.moved.room_members, res.json().data.moved.room_messages, res.json().data.moved.room_agent_runs], [3, 1, 1]);

      const rooms = (await asUser(tenant, signed, { method: 'GET', url: '/api/v1/rooms' })).json().data;
      const byId = new Map(rooms.map((r: Json) => [r.id, r]));
      const mine = byId.get(own.id) as Json;
      assert.equal(mine.membership.principalId, signedPrincipal, 'one principal id in every room');
      assert.equal(mine.membership.role, 'owner');
      assert.equal(mine.membership.endUserId, signed);
      assert.deepEqual(mine.createdBy, { type: 'end_user', principalId: signedPrincipal });
      const sharedView = byId.get(shared.id) as Json;
      assert.deepEqual([sharedView.membership.role, sharedView.membership.state, sharedView.membership.readMarker], ['owner', 'joined', joinedHead],
        'the stronger role, the further read marker');
      assert.equal((byId.get(hosted.id) as Json).membership.state, 'joined', 'joined beats invited');
      const counted = await ctx.dataSource.query('SELECT principal_id FROM room_reactions WHERE message_id = $1', [hello.id]);
      assert.deepEqual(counted.map((r: Json) => r.principal_id), [signedPrincipal], 'one reaction of one person counts once after the merge');
      const sharedMembers = (await asKey(tenant, { method: 'GET', url: `/api/v1/rooms/${shared.id}/members` })).json().data;
      assert.deepEqual(sharedMembers.filter((m: Json) => m.type === 'end_user').map((m: Json) => m.principalId), [signedPrincipal], 'one record remains');
      const leftovers = await ctx.dataSource.query(
        `SELECT (SELECT count(*) FROM room_members WHERE principal_id = $1) + (SELECT count(*) FROM room_messages WHERE author_principal_id = $1)
              + (SELECT count(*) FROM room_agent_runs WHERE starter_principal_id = $1) + (SELECT count(*) FROM room_events WHERE audience_principal_id = $1)
              + (SELECT count(*) FROM room_approvals WHERE requester_principal_id = $1) AS n`, [anonPrincipal]);
      assert.equal(Number(leftovers[0].n), 0, 'nothing names the anonymous principal any more');

      const log = (await asUser(tenant, signed, { method: 'GET', url: `/api/v1/rooms/${own.id}/events?after=0` })).json().data;
      const written = log.events.find((e: Json) => e.data.messageId === note.id);
      assert.equal(written.data.message.author.principalId, signedPrincipal);
      assert.ok(log.events.some((e: Json) => e.type === 'run.updated' && e.data.runId === runId), 'its own runs\' internal events stay readable');
      const run = await asUser(tenant, signed, { method: 'GET', url: `/api/v1/agent-runs/${runId}` });
      assert.equal(run.statusCode, 200);
      assert.deepEqual(run.json().data.startedBy, { type: 'end_user', id: signed });
      const approvals = (await asUser(tenant, signed, { method: 'GET', url: `/api/v1/approvals?roomId=${own.id}` })).json().data;
      assert.deepEqual(approvals.map((a: Json) => [a.subjectId, a.requestedBy]), [[runId, { type: 'end_user', id: signed }]]);
      const cancelled = await asUser(tenant, signed, { method: 'POST', url: `/api/v1/agent-runs/${runId}/cancel` });
      assert.equal(cancelled.json().data.status, 'cancelled', 'the signed user is now the run\'s starter');
      assert.equal((await asUser(tenant, signed, { method: 'PATCH', url: `/api/v1/rooms/${own.id}`, payload: { title: 'Signed idea' } })).statusCode, 200);
      assert.equal((await asUser(tenant, anon, { method: 'GET', url: `/api/v1/rooms/${own.id}` })).statusCode, 404, 'the anonymous principal holds nothing');
    });

    it('no answer shows an end user another member\'s anonymous id (what a merge would take); its holder and keys still see it', async () => {
      const anon = `anon_${randomBytes(12).toString('hex')}`;
      const host = `host-${randomBytes(4).toString('hex')}`;
      const anonPrincipal = principalIdOf(tenant.product.id, 'end_user', anon);
      const room = await openRoom(tenant, host, { visibility: 'product', title: 'Shared export pains' });
      assert.equal((await asUser(tenant, anon, { method: 'POST', url: `/api/v1/rooms/${room.id}/join` })).statusCode, 200);
      const said = await say(tenant, anon, room.id, 'Shared here too');
      const asked = await asUser(tenant, host, { method: 'POST', url: `/api/v1/rooms/${room.id}/messages`,
        payload: { body: 'Which?', kind: 'poll', poll: { options: ['a', 'b'] } } });
      assert.equal(asked.statusCode, 201, asked.body);
      const answered = await asUser(tenant, anon, { method: 'PUT', url: `/api/v1/rooms/${room.id}/polls/${asked.json().data.poll.id}/responses`,
        payload: { optionIndex: 1 } });
      assert.equal(answered.statusCode, 200, answered.body);
      for (const messageId of [said.id, asked.json().data.id]) {
        const reacted = await asUser(tenant, anon, { method: 'POST', url: `/api/v1/rooms/${room.id}/messages/${messageId}/reactions`,
          payload: { emoji: '👍' } });
        assert.equal(reacted.statusCode, 200, reacted.body);
      }

      for (const url of [
        `/api/v1/rooms/${room.id}/members`, `/api/v1/rooms/${room.id}`, `/api/v1/rooms/${room.id}/events`, `/api/v1/rooms/${room.id}/events?after=0`,
        `/api/v1/rooms/${room.id}/catch-up`, '/api/v1/rooms', '/api/v1/rooms/search?q=Shared',
      ]) {
        const res = await asUser(tenant, host, { method: 'GET', url });
        assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
        assert.ok(!res.body.includes(anon), `${url} shows another member's anonymous id: ${res.body}`);
      }
      const snapshot = (await asUser(tenant, host, { method: 'GET', url: `/api/v1/rooms/${room.id}/events` })).json().data.snapshot;
      const masked = snapshot.members.find((m: Json) => m.principalId === anonPrincipal);
      assert.deepEqual([masked.type, masked.endUserId], ['end_user', null], 'the member is there under its opaque principalId');
      const signedMember = snapshot.members.find((m: Json) => m.type === 'end_user' && m.principalId !== anonPrincipal);
      assert.equal(signedMember.endUserId, host, 'a signed member\'s id is shown as before');
      const own = (await asUser(tenant, anon, { method: 'GET', url: `/api/v1/rooms/${room.id}/members` })).json().data;
      assert.equal(own.find((m: Json) => m.principalId === anonPrincipal).endUserId, anon, 'the holder sees its own id');
      const keyed = (await asKey(tenant, { method: 'GET', url: `/api/v1/rooms/${room.id}/members` })).json().data;
      assert.equal(keyed.find((m: Json) => m.principalId === anonPrincipal).endUserId, anon, 'a key (the product\'s server) sees it');
    });
  });

  it('the walk-through of docs/rooms.md: an end user, a key and a teammate through one room', async () => {
    const [ada, grace] = ['ada', 'grace'].map((n) => `${n}-${randomBytes(4).toString('hex')}`);
    const created = await asUser(tenant, ada, { method: 'POST', url: '/api/v1/rooms', payload: { title: 'Faster exports', kind: 'feature' } });
    assert.equal(created.statusCode, 201, created.body);
    const roomId = created.json().data.id;
    const R = `/api/v1/rooms/${roomId}`;
    const invited = await asKey(tenant, { method: 'POST', url: `${R}/members`, payload: { endUserIds: [grace] } });
    assert.deepEqual([invited.statusCode, invited.json().data.invited.length, invited.json().data.alreadyMembers], [201, 1, []]);
    assert.equal((await asUser(tenant, grace, { method: 'POST', url: `${R}/join` })).json().data.state, 'joined');
    const written = await asUser(tenant, ada, { method: 'POST', url: `${R}/messages`, payload: { body: 'Exports time out at 10k rows' } });
    assert.equal(written.statusCode, 201, written.body);
    const note = await call(asTeammate(tenant.owner, {
      method: 'POST', url: `/api/workspace/rooms/${roomId}/messages`, payload: { body: 'Streaming export ships next sprint', visibility: 'internal' },
    }));
    assert.equal(note.statusCode, 201, note.body);
    const marker = `walk-${randomBytes(6).toString('hex')}`;
    ctx.fakeAi.when(marker, { content: 'Exports time out; streaming is planned.' });
    const invoked = await asUser(tenant, ada, { method: 'POST', url: `${R}/agents/assistant/invoke`, payload: { input: `Summarise the thread ${marker}` } });
    assert.deepEqual([invoked.statusCode, invoked.json().data.status], [202, 'queued']);
    const runUrl = `/api/v1/agent-runs/${invoked.json().data.id}`;
    const waiting = await eventually(async () => {
      const run = (await asUser(tenant, ada, { method: 'GET', url: runUrl })).json().data;
      return run.status === 'awaiting_approval' ? run : null;
    }, 30_000);
    const approved = await call(asTeammate(tenant.owner, {
      method: 'POST', url: `/api/v1/approvals/${waiting.sideEffect.approvalId}/approve`, payload: { note: 'fine to share' },
    }));
    assert.equal(approved.json().data.status, 'approved');
    await eventually(async () => (await asUser(tenant, ada, { method: 'GET', url: runUrl })).json().data.status === 'succeeded', 30_000);
    const canvas = await asKey(tenant, {
      method: 'PATCH', url: `${R}/canvas`, payload: { content: '# Plan' }, headers: { 'idempotency-key': `canvas-${roomId}`, 'if-match': '"0"' },
    });
    assert.deepEqual([canvas.statusCode, canvas.json().data.version, canvas.headers.etag], [200, 1, '"1"']);

    const caught = (await asUser(tenant, grace, { method: 'GET', url: `${R}/catch-up` })).json().data;
    assert.deepEqual(caught.messages.map((m: Json) => m.author.type), ['end_user', 'agent'], 'Ada\'s message and the assistant\'s; no internal note');
    const log = (await asUser(tenant, grace, { method: 'GET', url: `${R}/events?after=${caught.readMarker}` })).json().data;
    assert.equal(log.limited, false);
    assert.ok(log.events.every((e: Json) => e.visibility === 'customer'));
    assert.ok(log.events.some((e: Json) => e.type === 'room.canvas.updated'));
    const read = await asUser(tenant, grace, { method: 'PATCH', url: R, payload: { readMarker: log.seq } });
    assert.equal(read.json().data.membership.readMarker, log.seq);
    const all = (await call(asTeammate(tenant.owner, { method: 'GET', url: `/api/workspace/rooms/${roomId}/events?after=0` }))).json().data;
    assert.ok(all.events.some((e: Json) => e.visibility === 'internal'), 'the teammate reads the internal entries too');
  });

  describe('contract checks', () => {
    it('archiving cancels the room\'s pending approvals of every kind, not only its runs\'', async () => {
      const room = await openRoom(tenant, 'closer');
      const message = await say(tenant, 'closer', room.id, 'Press bulk export');
      const promoted = await asKey(tenant, {
        method: 'POST', url: `/api/v1/rooms/${room.id}/promote`, payload: { title: 'Bulk export', body: 'How to', sourceMessageIds: [message.id] },
      });
      assert.equal(promoted.statusCode, 202, promoted.body);
      const { approval } = promoted.json().data;
      const archived = await asUser(tenant, 'closer', { method: 'PATCH', url: `/api/v1/rooms/${room.id}`, payload: { status: 'archived' } });
      assert.equal(archived.statusCode, 200, archived.body);
      const [after] = (await asKey(tenant, { method: 'GET', url: `/api/v1/approvals?roomId=${room.id}` })).json().data;
      assert.deepEqual([after.id, after.status], [approval.id, 'cancelled']);
      const decided = await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/v1/approvals/${approval.id}/approve`, payload: {} }));
      assert.equal(errorCode(decided), 'CONFLICT', 'a cancelled approval cannot be approved');
      const log = (await call(asTeammate(tenant.owner, { method: 'GET', url: `/api/workspace/rooms/${room.id}/events?after=0` }))).json().data.events;
      assert.ok(log.some((e: Json) => e.type === 'approval.decided' && e.data.approvalId === approval.id && e.data.status === 'cancelled'));

      // One that a job wrote while the archive ran escapes its cancel: it stays pending and decides nothing.
      await ctx.dataSource.query(`UPDATE room_approvals SET status = 'pending' WHERE id = $1`, [approval.id]);
      const late = await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/v1/approvals/${approval.id}/approve`, payload: {} }));
      assert.deepEqual([late.statusCode, errorCode(late)], [409, 'CONFLICT'], late.body);
      const [knowledge] = await ctx.dataSource.query('SELECT state FROM room_knowledge WHERE room_id = $1', [room.id]);
      assert.equal(knowledge.state, 'pending_approval', 'nothing is published in an archived room');
    });

    it('the OpenAPI document lists every Rooms route under the rooms tag, described as contract version 1.5, with 429 documented', () => {
      const doc = ctx.app.openapiDocument() as Json;
      const tag = doc.tags.find((t: Json) => t.name === 'rooms');
      assert.match(tag.description, /version 1\.5/);
      const ops = Object.entries(doc.paths as Record<string, Record<string, Json>>)
        .flatMap(([url, byMethod]) => Object.values(byMethod).map((op) => ({ url, op })));
      const rooms = ops.filter(({ url }) => ROOMS_PATHS.test(url));
      for (const { url, op } of rooms) {
        assert.deepEqual(op.tags, ['rooms'], `${op.operationId} ${url}`);
        if (url.startsWith('/api/v1/') && op.security.some((s: Json) => s.endUserToken)) assert.ok(op.responses['429'], `${op.operationId}: 429`);
      }
      assert.ok(ops.filter(({ op }) => op.tags.includes('rooms')).every(({ url }) => ROOMS_PATHS.test(url)), 'nothing else is tagged rooms');
      const ids = new Set(rooms.map(({ op }) => op.operationId));
      for (const id of [
        'listRooms', 'createRoom', 'searchRooms', 'getRoom', 'updateRoom', 'listRoomEvents', 'catchUpRoom', 'joinRoom', 'leaveRoom',
        'postRoomMessage', 'editRoomMessage', 'deleteRoomMessage', 'listRoomMembers', 'inviteRoomMembers', 'removeRoomMember',
        'getRoomCanvas', 'updateRoomCanvas', 'invokeRoomAgent', 'listRoomAgentRuns', 'getAgentRun', 'cancelAgentRun',
        'listRoomApprovals', 'approveRoomApproval', 'rejectRoomApproval', 'promoteRoomKnowledge', 'listWorkspaceRoomEvents', 'postWorkspaceRoomMessage',
      ]) assert.ok(ids.has(id), `${id} is listed under rooms`);
    });

    it('every Rooms route answers service-rooms-version: 1.5, its refusals included', async () => {
      const doc = ctx.app.openapiDocument() as Json;
      const routes = Object.entries(doc.paths as Record<string, Record<string, Json>>)
        .filter(([url]) => ROOMS_PATHS.test(url))
        .flatMap(([url, byMethod]) => Object.keys(byMethod).map((method) => [method.toUpperCase(), url.replace(/\{[^}]+\}/g, 'x_unknown0000000')]));
      assert.ok(routes.length >= 27);
      for (const [method, url] of routes) {
        const res = await call({ method: method as InjectOptions['method'], url });
        assert.equal(res.statusCode, 401, `${method} ${url}`);
        assert.equal(res.headers['service-rooms-version'], '1.5', `${method} ${url}`);
      }
      const room = await openRoom(tenant, 'header');
      const answers = [
        await asUser(tenant, 'header', { method: 'GET', url: `/api/v1/rooms/${room.id}` }),
        await asUser(tenant, 'header', { method: 'GET', url: `/api/v1/rooms/${room.id}/events?after=-1` }),
        await asUser(tenant, 'stranger', { method: 'GET', url: `/api/v1/rooms/${room.id}` }),
        await asKey(tenant, { method: 'POST', url: '/api/v1/rooms', payload: { title: 'x' } }),
        await asUser(tenant, 'header', { method: 'POST', url: `/api/v1/rooms/${room.id}/leave` }),
        await asKey(tenant, { method: 'GET', url: `/api/v1/rooms/${room.id}/agent-runs` }),
        await call(asTeammate(tenant.owner, { method: 'GET', url: `/api/workspace/rooms/${room.id}/events` })),
        await asKey(tenant, { method: 'POST', url: `/api/v1/rooms/${room.id}/compile`, payload: {} }),
      ];
      assert.deepEqual(answers.map((r) => r.statusCode), [200, 400, 404, 403, 409, 200, 200, 400]);
      for (const res of answers) assert.equal(res.headers['service-rooms-version'], '1.5', res.body);
    });
  });
});

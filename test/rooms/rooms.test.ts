import assert from 'node:assert/strict';
import { createEndpoint } from '../../db/webhooks/webhook-endpoints';
import { outboxEvents } from '../support/customer-loop';
import { Tenant, asTeammate, call, createTenant, endUserToken, errorCode, sessionFor, withKey } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { ctx } from '../support/root-hooks';
import { asKey, asUser, openRoom, roomsTenant, say } from '../support/rooms';
import { route } from '../support/routes';

type Json = Record<string, any>;

describe('rooms: rooms, members, messages, events and catch-up', function () {
  // The catch-up case posts over a hundred messages; a shared machine may be slow.
  this.timeout(120_000);
  let tenant: Tenant;

  before(async () => {
    tenant = await roomsTenant();
  });

  const events = async (sub: string, roomId: string, query = '') =>
    (await asUser(tenant, sub, { method: 'GET', url: `/api/v1/rooms/${roomId}/events${query}` }));

  it('creates a room: the caller owns it, room.created is seq 1 and a webhook; every answer names contract 1.5', async () => {
    const res = await asUser(tenant, 'ada', { method: 'POST', url: '/api/v1/rooms',
      payload: { title: 'Faster exports', kind: 'feature', purpose: 'Talk it through' } });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['service-rooms-version'], '1.5');
    const room = res.json().data;
    assert.match(room.id, /^room_/);
    assert.deepEqual([room.status, room.visibility, room.kind, room.headSeq], ['open', 'private', 'feature', 1]);
    assert.equal(room.membership.role, 'owner');
    assert.equal(room.membership.state, 'joined');
    assert.equal(room.membership.readMarker, 1);
    assert.deepEqual(room.createdBy, { type: 'end_user', principalId: room.membership.principalId });
    const [created] = (await outboxEvents(tenant.organizationId, 'room.created')).filter((e) => e.payload.roomId === room.id);
    assert.deepEqual(created.payload, { roomId: room.id, seq: 1, kind: 'feature', visibility: 'private', createdBy: room.createdBy });

    const members = (await asKey(tenant, { method: 'GET', url: `/api/v1/rooms/${room.id}/members` })).json().data;
    assert.deepEqual(members.map((m: Json) => [m.type, m.role, m.visibility, m.alias]).sort(), [
      ['agent', 'agent', 'internal', 'assistant'], ['agent', 'agent', 'internal', 'editor'], ['end_user', 'owner', 'external', null],
    ]);
    const again = await openRoom(tenant, 'ada');
    const mine = (await asUser(tenant, 'ada', { method: 'GET', url: '/api/v1/rooms' })).json().data;
    assert.equal((mine[0] as Json).membership.principalId, room.membership.principalId, 'the principal id is the same in every room');
    assert.deepEqual(mine.slice(0, 2).map((r: Json) => r.id), [again.id, room.id], 'newest first');
  });

  it('refuses bad input before any lookup, keys on identity paths, and a missing credential', async () => {
    const bad = [{}, { title: '' }, { title: 'x'.repeat(181) }, { title: 'ok', extra: 1 }, { title: 'ok', kind: 'chat' },
      { title: 'ok', threadIds: ['thr_nope000000000'] }];
    for (const payload of bad) {
      const res = await asUser(tenant, 'ada', { method: 'POST', url: '/api/v1/rooms', payload });
      assert.equal(errorCode(res), 'VALIDATION_FAILED', JSON.stringify(payload));
    }
    const badThread = await asUser(tenant, 'ada', { method: 'POST', url: '/api/v1/rooms', payload: { title: 'ok', threadIds: ['thr_nope000000000'] } });
    assert.equal(badThread.json().error.details[0].path, 'threadIds[0]');
    const byKey = await asKey(tenant, { method: 'POST', url: '/api/v1/rooms', payload: { title: 'ok' } });
    assert.equal(errorCode(byKey), 'KEY_AUDIENCE_MISMATCH');
    const anonymous = await call({ method: 'GET', url: '/api/v1/rooms' });
    assert.equal(errorCode(anonymous), 'INVALID_API_KEY');
    assert.equal(anonymous.headers['service-rooms-version'], '1.5');
  });

  it('a private room is the same 404 to an uninvited end user and to another product; a product room is open to all', async () => {
    const secret = await openRoom(tenant, 'owner-1');
    const stranger = await roomsTenant();
    for (const url of [`/api/v1/rooms/${secret.id}`, `/api/v1/rooms/${secret.id}/events`, `/api/v1/rooms/${secret.id}/catch-up`,
      '/api/v1/rooms/room_unknown0000000']) {
      const res = await asUser(tenant, 'nosy', { method: 'GET', url });
      assert.equal(res.statusCode, 404, url);
      assert.equal((await asUser(stranger, 'owner-1', { method: 'GET', url })).statusCode, 404, `other product: ${url}`);
    }
    assert.equal((await asUser(tenant, 'nosy', { method: 'POST', url: `/api/v1/rooms/${secret.id}/join` })).statusCode, 404);
    assert.equal((await asUser(tenant, 'nosy', { method: 'POST', url: `/api/v1/rooms/${secret.id}/messages`, payload: { body: 'hi' } })).statusCode, 404);
    assert.equal((await call(withKey(stranger.key, { method: 'GET', url: `/api/v1/rooms/${secret.id}/members` }))).statusCode, 404, 'another tenant\'s key');
    const nosyRooms = (await asUser(tenant, 'nosy', { method: 'GET', url: '/api/v1/rooms' })).json().data;
    assert.ok(!nosyRooms.some((r: Json) => r.id === secret.id));

    const open = await openRoom(tenant, 'owner-1', { visibility: 'product' });
    const seen = await asUser(tenant, 'nosy', { method: 'GET', url: `/api/v1/rooms/${open.id}` });
    assert.equal(seen.statusCode, 200);
    assert.equal(seen.json().data.membership, null);
    assert.equal(errorCode(await events('nosy', open.id)), 'FORBIDDEN', 'reading the log needs joining');
    assert.equal(errorCode(await asUser(tenant, 'nosy', { method: 'POST', url: `/api/v1/rooms/${open.id}/messages`, payload: { body: 'hi' } })), 'FORBIDDEN');
    const joined = await asUser(tenant, 'nosy', { method: 'POST', url: `/api/v1/rooms/${open.id}/join` });
    assert.equal(joined.statusCode, 200, joined.body);
    assert.deepEqual([joined.json().data.state, joined.json().data.role, joined.json().data.readMarker], ['joined', 'customer', 2]);
    const repeat = await asUser(tenant, 'nosy', { method: 'POST', url: `/api/v1/rooms/${open.id}/join` });
    assert.deepEqual(repeat.json().data, joined.json().data, 'joining again answers the same');
  });

  it('members: a key invites (an identity may not), the invited join, leave, and are removed; owner and agents stay', async () => {
    const room = await openRoom(tenant, 'host');
    const byIdentity = await asUser(tenant, 'host', { method: 'POST', url: `/api/v1/rooms/${room.id}/members`, payload: { endUserIds: ['guest'] } });
    assert.equal(errorCode(byIdentity), 'FORBIDDEN');
    const readOnly = await createTenant(['service:rooms:read']);
    assert.equal(errorCode(await call(withKey(readOnly.key, { method: 'POST', url: `/api/v1/rooms/${room.id}/members`, payload: { endUserIds: ['guest'] } }))),
      'INSUFFICIENT_SCOPE');
    for (const payload of [{ endUserIds: [] }, { endUserIds: ['x'.repeat(201)] }, { endUserIds: Array.from({ length: 101 }, (_, i) => `u${i}`) }]) {
      assert.equal((await asKey(tenant, { method: 'POST', url: `/api/v1/rooms/${room.id}/members`, payload })).statusCode, 400);
    }
    const invited = await asKey(tenant, { method: 'POST', url: `/api/v1/rooms/${room.id}/members`, payload: { endUserIds: ['guest', 'guest-2'] } });
    assert.equal(invited.statusCode, 201, invited.body);
    const { invited: fresh, alreadyMembers } = invited.json().data;
    assert.deepEqual(fresh.map((m: Json) => [m.endUserId, m.state, m.role, m.visibility]).sort(), [
      ['guest', 'invited', 'customer', 'external'], ['guest-2', 'invited', 'customer', 'external'],
    ]);
    assert.deepEqual(alreadyMembers, []);
    const cohort = (await outboxEvents(tenant.organizationId, 'room.cohort.invited')).filter((e) => e.payload.roomId === room.id);
    assert.equal(cohort.length, 1);
    assert.equal(cohort[0].payload.count, 2);
    const repeat = (await asKey(tenant, { method: 'POST', url: `/api/v1/rooms/${room.id}/members`, payload: { endUserIds: ['guest'] } })).json().data;
    assert.deepEqual(repeat, { invited: [], alreadyMembers: [fresh.find((m: Json) => m.endUserId === 'guest').principalId] });
    assert.equal((await outboxEvents(tenant.organizationId, 'room.cohort.invited')).filter((e) => e.payload.roomId === room.id).length, 1,
      'nothing new, no event');

    assert.equal((await asUser(tenant, 'guest', { method: 'GET', url: `/api/v1/rooms/${room.id}` })).statusCode, 200, 'invited: visible');
    assert.equal(errorCode(await events('guest', room.id)), 'FORBIDDEN', 'invited is not joined');
    assert.equal((await asUser(tenant, 'guest', { method: 'POST', url: `/api/v1/rooms/${room.id}/join` })).statusCode, 200);
    assert.equal(errorCode(await asUser(tenant, 'host', { method: 'POST', url: `/api/v1/rooms/${room.id}/leave` })), 'CONFLICT', 'the owner stays');
    const left = await asUser(tenant, 'guest-2', { method: 'POST', url: `/api/v1/rooms/${room.id}/leave` });
    assert.equal(left.json().data.state, 'left', 'declining an invitation');
    assert.equal((await asUser(tenant, 'guest-2', { method: 'GET', url: `/api/v1/rooms/${room.id}` })).statusCode, 404, 'left a private room: gone');
    const leftList = (await asKey(tenant, { method: 'GET', url: `/api/v1/rooms/${room.id}/members?state=left` })).json().data;
    assert.deepEqual(leftList.map((m: Json) => m.endUserId), ['guest-2']);

    const all = (await asKey(tenant, { method: 'GET', url: `/api/v1/rooms/${room.id}/members?limit=2` })).json();
    assert.equal(all.data.length, 2);
    const rest = (await asKey(tenant, { method: 'GET', url: `/api/v1/rooms/${room.id}/members?limit=2&cursor=${all.nextCursor}` })).json();
    assert.equal(rest.data.length, 2, 'owner, two agents and the guest');
    assert.equal(rest.nextCursor, null);

    const principals = Object.fromEntries((await asKey(tenant, { method: 'GET', url: `/api/v1/rooms/${room.id}/members` })).json().data.map((m: Json) =>
      [m.alias ?? m.endUserId, m.principalId]));
    for (const who of ['host', 'assistant']) {
      assert.equal(errorCode(await asKey(tenant, { method: 'DELETE', url: `/api/v1/rooms/${room.id}/members/${principals[who]}` })), 'CONFLICT', who);
    }
    assert.equal((await asKey(tenant, { method: 'DELETE', url: `/api/v1/rooms/${room.id}/members/prn_unknown000000000000000` })).statusCode, 404);
    const removed = await asKey(tenant, { method: 'DELETE', url: `/api/v1/rooms/${room.id}/members/${principals.guest}` });
    assert.equal(removed.json().data.state, 'removed');
    assert.equal((await asUser(tenant, 'guest', { method: 'GET', url: `/api/v1/rooms/${room.id}` })).statusCode, 404);
    assert.equal(errorCode(await asUser(tenant, 'host', { method: 'DELETE', url: `/api/v1/rooms/${room.id}/members/${principals.guest}` })), 'FORBIDDEN',
      'identity on a key path');

    const open = await openRoom(tenant, 'host', { visibility: 'product' });
    await asUser(tenant, 'drifter', { method: 'POST', url: `/api/v1/rooms/${open.id}/join` });
    const drifter = (await asUser(tenant, 'drifter', { method: 'GET', url: `/api/v1/rooms/${open.id}` })).json().data.membership.principalId;
    await asKey(tenant, { method: 'DELETE', url: `/api/v1/rooms/${open.id}/members/${drifter}` });
    assert.equal(errorCode(await asUser(tenant, 'drifter', { method: 'POST', url: `/api/v1/rooms/${open.id}/join` })), 'FORBIDDEN',
      'removed from a product room');
  });

  it('messages: customers post customer messages only, edit and delete their own; internal ones never reach them', async () => {
    const room = await openRoom(tenant, 'poster', { visibility: 'product' });
    await asUser(tenant, 'reader', { method: 'POST', url: `/api/v1/rooms/${room.id}/join` });
    const internal = await asUser(tenant, 'poster', { method: 'POST', url: `/api/v1/rooms/${room.id}/messages`,
      payload: { body: 'psst', visibility: 'internal' } });
    assert.equal(errorCode(internal), 'FORBIDDEN');
    for (const payload of [{}, { body: '' }, { body: 'x'.repeat(4001) }, { body: 'hi', kind: 'essay' }, { body: 'hi', extra: true }]) {
      assert.equal((await asUser(tenant, 'poster', { method: 'POST', url: `/api/v1/rooms/${room.id}/messages`, payload })).statusCode, 400);
    }
    const message = await say(tenant, 'poster', room.id, 'Exports time out at 10k rows');
    assert.equal(message.seq, 3);
    const note = await call(asTeammate(tenant.owner, {
      method: 'POST', url: `/api/workspace/rooms/${room.id}/messages`, payload: { body: 'Known issue TKT-1', visibility: 'internal' },
    }));
    assert.equal(note.statusCode, 201, note.body);
    assert.equal(note.json().data.author.type, 'teammate');
    const decision = await call(asTeammate(tenant.owner, {
      method: 'POST', url: `/api/workspace/rooms/${room.id}/messages`, payload: { body: 'We will stream exports', visibility: 'customer', kind: 'decision' },
    }));
    assert.equal(decision.statusCode, 201);
    const recorded = (await outboxEvents(tenant.organizationId, 'room.decision.recorded')).filter((e) => e.payload.roomId === room.id);
    assert.deepEqual(recorded.map((e) => e.payload.messageId), [decision.json().data.id]);
    const created = (await outboxEvents(tenant.organizationId, 'room.message.created')).filter((e) => e.payload.roomId === room.id);
    assert.deepEqual(created.map((e) => e.payload.visibility), ['customer', 'internal', 'customer']);
    assert.ok(created.every((e) => !JSON.stringify(e.payload).includes('Exports time out')), 'webhooks carry no message text');

    const log = (await events('reader', room.id, '?after=0')).json().data;
    assert.ok(!JSON.stringify(log).includes('TKT-1'), 'the customer never sees the internal note');
    const snapshot = (await events('reader', room.id)).json().data.snapshot;
    assert.deepEqual(snapshot.messages.map((m: Json) => m.body), ['Exports time out at 10k rows', 'We will stream exports']);
    const teamView = (await call(asTeammate(tenant.owner, { method: 'GET', url: `/api/workspace/rooms/${room.id}/events?after=0` }))).json().data;
    assert.ok(JSON.stringify(teamView).includes('TKT-1'), 'the workspace sees everything');
    const member = await sessionFor(tenant.organizationId, 'member');
    assert.equal((await call(asTeammate(member, { method: 'GET', url: `/api/workspace/rooms/${room.id}/events` }))).statusCode, 200, 'any role');
    const otherOrg = await createTenant();
    assert.equal((await call(asTeammate(otherOrg.owner, { method: 'GET', url: `/api/workspace/rooms/${room.id}/events` }))).statusCode, 404);

    const notMine = await asUser(tenant, 'reader', { method: 'PATCH', url: `/api/v1/rooms/${room.id}/messages/${message.id}`, payload: { body: 'mine now' } });
    assert.equal(errorCode(notMine), 'FORBIDDEN');
    const hidden = await asUser(tenant, 'reader', { method: 'PATCH', url: `/api/v1/rooms/${room.id}/messages/${note.json().data.id}`, payload: { body: 'x' } });
    assert.equal(hidden.statusCode, 404, 'an internal message is not there for a customer');
    const edited = await asUser(tenant, 'poster', { method: 'PATCH', url: `/api/v1/rooms/${room.id}/messages/${message.id}`,
      payload: { body: 'Exports time out at 5k rows' } });
    assert.equal(edited.statusCode, 200);
    assert.ok(edited.json().data.editedAt);
    assert.equal(errorCode(await asUser(tenant, 'reader', { method: 'DELETE', url: `/api/v1/rooms/${room.id}/messages/${message.id}` })), 'FORBIDDEN');
    const deleted = await asUser(tenant, 'poster', { method: 'DELETE', url: `/api/v1/rooms/${room.id}/messages/${message.id}` });
    assert.equal(deleted.json().data.body, '');
    assert.ok(deleted.json().data.deletedAt);
    const again = await asUser(tenant, 'poster', { method: 'DELETE', url: `/api/v1/rooms/${room.id}/messages/${message.id}` });
    assert.deepEqual(again.json().data, deleted.json().data, 'deleting again answers the same');
    assert.equal(errorCode(await asUser(tenant, 'poster', { method: 'PATCH', url: `/api/v1/rooms/${room.id}/messages/${message.id}`,
      payload: { body: 'back' } })), 'CONFLICT');
  });

  it('the event log: seq rises by one per change, readers skip what they may not see, pages say where to go on', async () => {
    const room = await openRoom(tenant, 'logger', { visibility: 'product' });
    await asUser(tenant, 'follower', { method: 'POST', url: `/api/v1/rooms/${room.id}/join` });
    await say(tenant, 'logger', room.id, 'one');
    await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/workspace/rooms/${room.id}/messages`,
      payload: { body: 'note', visibility: 'internal' } }));
    await say(tenant, 'logger', room.id, 'two');
    const all = (await call(asTeammate(tenant.owner, { method: 'GET', url: `/api/workspace/rooms/${room.id}/events?after=0` }))).json().data;
    assert.deepEqual(all.events.map((e: Json) => e.seq), [1, 2, 3, 4, 5]);
    assert.deepEqual(all.events.map((e: Json) => e.type), ['room.created', 'member.joined', 'room.message.created', 'room.message.created',
      'room.message.created']);
    const mine = (await events('follower', room.id, '?after=0')).json().data;
    assert.deepEqual(mine.events.map((e: Json) => e.seq), [1, 2, 3, 5], 'the internal note is a gap');
    assert.deepEqual([mine.limited, mine.snapshot, mine.seq, mine.headSeq, mine.hasMore], [false, null, 5, 5, false]);
    assert.equal(mine.events[2].data.message.body, 'one');
    const page = (await events('follower', room.id, '?after=0&limit=3')).json().data;
    assert.deepEqual([page.events.map((e: Json) => e.seq), page.seq, page.hasMore], [[1, 2, 3], 3, true]);
    const next = (await events('follower', room.id, `?after=${page.seq}&limit=3`)).json().data;
    assert.deepEqual([next.events.map((e: Json) => e.seq), next.seq, next.hasMore], [[5], 5, false]);
    const ahead = await events('follower', room.id, '?after=6');
    assert.equal(errorCode(ahead), 'VALIDATION_FAILED');
    for (const q of ['?after=-1', '?limit=0', '?limit=101', '?after=x']) assert.equal((await events('follower', room.id, q)).statusCode, 400, q);
  });

  it('the snapshot rule: no `after`, or further behind than the threshold, gives the whole current state instead of a gap', async () => {
    const app = await ctx.buildApp({ roomSnapshotThreshold: 3, roomSnapshotMessages: 2 });
    const get = async (query: string) => (await call({
      method: 'GET', url: `/api/v1/rooms/${room.id}/events${query}`, headers: { authorization: `Bearer ${endUserToken(tenant.product, { sub: 'snap' })}` },
    }, app)).json().data;
    const room = await openRoom(tenant, 'snap');
    for (const body of ['a', 'b', 'c', 'd']) await say(tenant, 'snap', room.id, body);
    const far = await get('?after=1');
    assert.equal(far.limited, true, 'headSeq 5 − after 1 > 3');
    assert.deepEqual([far.events, far.seq, far.headSeq, far.hasMore], [[], 5, 5, false]);
    assert.deepEqual(far.snapshot.messages.map((m: Json) => m.body), ['c', 'd'], 'the last K, oldest first');
    assert.equal(far.snapshot.room.id, room.id);
    assert.equal(far.snapshot.members.length, 3);
    assert.deepEqual(far.snapshot.canvas, { version: 0 });
    const near = await get('?after=2');
    assert.equal(near.limited, false, 'headSeq 5 − after 2 = 3 is not over');
    assert.deepEqual(near.events.map((e: Json) => e.seq), [3, 4, 5]);
    assert.equal((await get('')).limited, true, 'no after');
  });

  it('catch-up counts what others posted since the marker; only PATCH readMarker (forward, ≤ headSeq) and join move it', async () => {
    const room = await openRoom(tenant, 'talker', { visibility: 'product' });
    await asUser(tenant, 'lurker', { method: 'POST', url: `/api/v1/rooms/${room.id}/join` });
    await say(tenant, 'talker', room.id, 'first');
    await say(tenant, 'lurker', room.id, 'my own');
    await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/workspace/rooms/${room.id}/messages`,
      payload: { body: 'internal', visibility: 'internal' } }));
    const second = await say(tenant, 'talker', room.id, 'second');
    const catchUp = async () => (await asUser(tenant, 'lurker', { method: 'GET', url: route('/api/v1/rooms/{id}/catch-up', { id: room.id }) })).json().data;
    const first = await catchUp();
    assert.deepEqual([first.readMarker, first.seq, first.unreadCount, first.limited], [2, 6, 2, false]);
    assert.deepEqual(first.messages.map((m: Json) => m.body), ['first', 'second']);
    assert.deepEqual(await catchUp(), first, 'reading does not move the marker');
    const patch = (readMarker: number) => asUser(tenant, 'lurker', { method: 'PATCH', url: route('/api/v1/rooms/{id}', { id: room.id }),
      payload: { readMarker } });
    assert.equal(errorCode(await patch(7)), 'VALIDATION_FAILED', 'beyond headSeq');
    const moved = await patch(second.seq - 1);
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(moved.json().data.membership.readMarker, 5);
    assert.equal(moved.json().data.headSeq, 6, 'a read marker writes no event');
    assert.deepEqual((await catchUp()).messages.map((m: Json) => m.body), ['second']);
    assert.equal(errorCode(await patch(3)), 'CONFLICT', 'forward only');

    for (let i = 0; i < 101; i += 1) await say(tenant, 'talker', room.id, `bulk ${i}`);
    const flood = await catchUp();
    assert.deepEqual([flood.unreadCount, flood.limited, flood.messages.length], [102, true, 100]);
    assert.equal(flood.messages[99].body, 'bulk 100', 'the newest 100, oldest first');
  });

  it('room changes: the owner edits and moves the status as allowed; others may not; an archived room takes no writes', async () => {
    const room = await openRoom(tenant, 'boss', { visibility: 'product' });
    await asUser(tenant, 'peer', { method: 'POST', url: `/api/v1/rooms/${room.id}/join` });
    const patch = (sub: string, payload: Json) => asUser(tenant, sub, { method: 'PATCH', url: route('/api/v1/rooms/{id}', { id: room.id }), payload });
    assert.equal(errorCode(await patch('peer', { title: 'Mine' })), 'FORBIDDEN');
    assert.equal(errorCode(await patch('boss', {})), 'VALIDATION_FAILED');
    const retitled = await patch('boss', { title: 'Streaming exports', purpose: null });
    assert.equal(retitled.json().data.title, 'Streaming exports');
    const updated = (await outboxEvents(tenant.organizationId, 'room.updated')).filter((e) => e.payload.roomId === room.id);
    assert.deepEqual(updated.map((e) => e.payload.changed), [['title']], 'purpose was already null');
    const same = await patch('boss', { status: 'open' });
    assert.equal(same.json().data.headSeq, retitled.json().data.headSeq, 'the same status: 200, no event');
    assert.equal((await patch('boss', { status: 'resolved' })).statusCode, 200);
    assert.equal(errorCode(await patch('boss', { status: 'waiting' })), 'CONFLICT', 'resolved → waiting');
    assert.equal((await patch('boss', { status: 'open' })).statusCode, 200);
    const moves = (await outboxEvents(tenant.organizationId, 'room.status_changed')).filter((e) => e.payload.roomId === room.id);
    assert.deepEqual(moves.map((e) => [e.payload.from, e.payload.to]), [['open', 'resolved'], ['resolved', 'open']]);
    assert.equal((await patch('boss', { status: 'archived' })).statusCode, 200);
    assert.equal(errorCode(await patch('boss', { status: 'open' })), 'CONFLICT', 'archived is final');
    assert.equal(errorCode(await asUser(tenant, 'peer', { method: 'POST', url: `/api/v1/rooms/${room.id}/messages`, payload: { body: 'hello?' } })),
      'CONFLICT');
    assert.equal(errorCode(await asKey(tenant, { method: 'POST', url: `/api/v1/rooms/${room.id}/members`, payload: { endUserIds: ['late'] } })), 'CONFLICT');
    const head = (await asUser(tenant, 'peer', { method: 'GET', url: `/api/v1/rooms/${room.id}` })).json().data.headSeq;
    assert.equal((await patch('peer', { readMarker: head })).statusCode, 200, 'the read marker still moves');
    assert.equal((await asUser(tenant, 'peer', { method: 'POST', url: `/api/v1/rooms/${room.id}/leave` })).statusCode, 200, 'leaving still works');
    const archived = (await asUser(tenant, 'boss', { method: 'GET', url: '/api/v1/rooms?status=archived' })).json().data;
    assert.deepEqual(archived.map((r: Json) => r.id), [room.id]);
  });

  it('search: a key searches the product, an end user its rooms and product rooms, never internal text', async () => {
    const word = `zebra${Date.now()}`;
    const privateRoom = await openRoom(tenant, 'searcher', { title: `About ${word}` });
    const open = await openRoom(tenant, 'other', { visibility: 'product' });
    await say(tenant, 'other', open.id, `the ${word} export`);
    await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/workspace/rooms/${open.id}/messages`,
      payload: { body: `internal ${word}2`, visibility: 'internal' } }));
    const byKey = (await asKey(tenant, { method: 'GET', url: `/api/v1/rooms/search?q=${word.toUpperCase()}` })).json().data;
    assert.deepEqual(byKey.map((h: Json) => h.room.id).sort(), [privateRoom.id, open.id].sort());
    assert.equal(byKey.find((h: Json) => h.room.id === open.id).matchedMessageIds.length, 2, 'a key sees internal messages');
    const mine = (await asUser(tenant, 'searcher', { method: 'GET', url: `/api/v1/rooms/search?q=${word}` })).json().data;
    assert.deepEqual(mine.map((h: Json) => h.room.id).sort(), [privateRoom.id, open.id].sort());
    assert.equal(mine.find((h: Json) => h.room.id === open.id).matchedMessageIds.length, 1);
    const outsider = (await asUser(tenant, 'outsider', { method: 'GET', url: `/api/v1/rooms/search?q=${word}2` })).json().data;
    assert.deepEqual(outsider, [], 'internal text is not searchable by customers');
    assert.equal((await asUser(tenant, 'outsider', { method: 'GET', url: '/api/v1/rooms/search' })).statusCode, 400);
  });

  it('search: a room names at most five matched messages, its newest (docs/rooms.md#paths)', async () => {
    const word = `yak${Date.now()}`;
    const room = await openRoom(tenant, 'chatty');
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await say(tenant, 'chatty', room.id, `${word} number ${i}`)).id);
    const [hit] = (await asKey(tenant, { method: 'GET', url: `/api/v1/rooms/search?q=${word}` })).json().data;
    assert.equal(hit.room.id, room.id);
    assert.deepEqual([...hit.matchedMessageIds].sort(), ids.slice(2).sort());
  });

  it('delivers room.* webhooks to a subscribed endpoint', async () => {
    const receiver = await Receiver.start();
    try {
      const hooked = await roomsTenant();
      await createEndpoint(ctx.dataSource, hooked.organizationId, { url: receiver.url, subscriptions: ['room.*'] });
      const room = await openRoom(hooked, 'hooked');
      await say(hooked, 'hooked', room.id, 'hello');
      const received = await receiver.waitFor(2);
      const bodies = received.map((r) => JSON.parse(r.body));
      assert.deepEqual(bodies.map((b: Json) => b.type).sort(), ['room.created', 'room.message.created']);
      assert.ok(bodies.every((b: Json) => b.data.roomId === room.id && Number.isInteger(b.data.seq)));
    } finally {
      await receiver.close();
    }
  });
});

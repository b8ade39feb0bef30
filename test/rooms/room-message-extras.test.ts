import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { InjectOptions } from 'fastify';
import { mediaStoreOf, readAll } from '../../runtime/media-store';
import { maintenanceWorkflow } from '../../workflows/platform/maintenance-workflow';
import { outboxEvents } from '../support/customer-loop';
import { Tenant, asTeammate, call, endUserToken, errorCode, eventually, withKey } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { asKey, asUser, openRoom, roomsTenant, say } from '../support/rooms';
import { route } from '../support/routes';

type Json = Record<string, any>;

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n');
const GIF = Buffer.concat([Buffer.from('GIF89a'), Buffer.from([1, 0, 1, 0, 0, 0, 0, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 1, 0, 0x3b])]);

describe('rooms: reactions, attachments, polls and moderation of messages', function () {
  this.timeout(120_000);
  let tenant: Tenant;
  let stranger: Tenant;

  before(async () => {
    tenant = await roomsTenant();
    stranger = await roomsTenant();
  });

  const join = (sub: string, roomId: string) => asUser(tenant, sub, { method: 'POST', url: route('/api/v1/rooms/{id}/join', { id: roomId }) });
  const post = (sub: string, roomId: string, payload: Json) => asUser(tenant, sub,
    { method: 'POST', url: route('/api/v1/rooms/{id}/messages', { id: roomId }), payload });
  const react = (sub: string, roomId: string, messageId: string, emoji: unknown, who = tenant) =>
    asUser(who, sub, { method: 'POST', url: `/api/v1/rooms/${roomId}/messages/${messageId}/reactions`, payload: { emoji } });
  const upload = (sub: string, roomId: string, bytes: Buffer, type: string | undefined, headers: Record<string, string> = {}, who = tenant) =>
    asUser(who, sub, { method: 'POST', url: `/api/v1/rooms/${roomId}/attachments`, payload: bytes,
      headers: { ...(type ? { 'content-type': type } : {}), ...headers } });
  const download = (sub: string, roomId: string, attachmentId: string, headers: Record<string, string> = {}, who = tenant) =>
    asUser(who, sub, { method: 'GET', url: `/api/v1/rooms/${roomId}/attachments/${attachmentId}`, headers });
  const answer = (sub: string, roomId: string, pollId: string, payload: Json, who = tenant) =>
    asUser(who, sub, { method: 'PUT', url: `/api/v1/rooms/${roomId}/polls/${pollId}/responses`, payload });
  const report = (sub: string, roomId: string, payload: Json, who = tenant) =>
    asUser(who, sub, { method: 'POST', url: `/api/v1/rooms/${roomId}/moderation/reports`, payload });
  const appeal = (sub: string, roomId: string, caseId: string, payload: Json, who = tenant) =>
    asUser(who, sub, { method: 'POST', url: `/api/v1/rooms/${roomId}/moderation/${caseId}/appeals`, payload });
  const log = async (sub: string, roomId: string) =>
    (await asUser(tenant, sub, { method: 'GET', url: `/api/v1/rooms/${roomId}/events?after=0` })).json().data.events as Json[];
  const teamLog = async (roomId: string) =>
    (await call(asTeammate(tenant.owner, { method: 'GET', url: `/api/workspace/rooms/${roomId}/events?after=0` }))).json().data.events as Json[];
  /** The message as `sub` sees it now (the log's entries carry the current message). */
  const seenBy = async (sub: string | null, roomId: string, messageId: string): Promise<Json> => {
    const entries = sub === null ? await teamLog(roomId) : await log(sub, roomId);
    const entry = entries.find((e) => e.type === 'room.message.created' && e.data.messageId === messageId);
    return entry?.data.message;
  };
  /** A product room of `owner` that each of `others` joined. */
  const room = async (owner: string, ...others: string[]) => {
    const r = await openRoom(tenant, owner, { visibility: 'product' });
    for (const sub of others) assert.equal((await join(sub, r.id)).statusCode, 200);
    return r;
  };

  it('reactions toggle per principal; every Message carries them with `me`; 20 distinct emoji at most; none on a deleted message', async () => {
    const r = await room('rx-owner', 'rx-peer', 'rx-lurker');
    const message = await say(tenant, 'rx-owner', r.id, 'Ship streaming exports');
    for (const emoji of ['', 'a b', 'x'.repeat(33), 'tab\there', 7, null]) {
      assert.equal(errorCode(await react('rx-peer', r.id, message.id, emoji)), 'VALIDATION_FAILED', JSON.stringify(emoji));
    }
    assert.equal(errorCode(await asUser(tenant, 'rx-peer', {
      method: 'POST', url: `/api/v1/rooms/${r.id}/messages/${message.id}/reactions`, payload: { emoji: '👍', extra: 1 },
    })), 'VALIDATION_FAILED');
    const long = '👍'.repeat(32);
    assert.equal((await react('rx-peer', r.id, message.id, long)).statusCode, 200, '32 characters (64 UTF-16 units) are allowed');
    assert.equal(errorCode(await react('rx-peer', r.id, message.id, '👍'.repeat(33))), 'VALIDATION_FAILED', '33 characters');

    const added = await react('rx-peer', r.id, message.id, '👍');
    assert.equal(added.statusCode, 200, added.body);
    assert.equal(added.headers['service-rooms-version'], '1.5');
    assert.deepEqual(added.json().data, { messageId: message.id, emoji: '👍', reacted: true, count: 1 });
    assert.deepEqual((await react('rx-owner', r.id, message.id, '👍')).json().data, { messageId: message.id, emoji: '👍', reacted: true, count: 2 });
    const byEmoji = (m: Json) => Object.fromEntries(m.reactions.map((x: Json) => [x.emoji, [x.count, x.me]]));
    assert.deepEqual(byEmoji(await seenBy('rx-peer', r.id, message.id)), { [long]: [1, true], '👍': [2, true] });
    assert.deepEqual(byEmoji(await seenBy('rx-lurker', r.id, message.id)), { [long]: [1, false], '👍': [2, false] });
    assert.deepEqual(byEmoji(await seenBy(null, r.id, message.id)), { [long]: [1, false], '👍': [2, false] }, 'internal readers too');
    const removed = await react('rx-peer', r.id, message.id, '👍');
    assert.deepEqual(removed.json().data, { messageId: message.id, emoji: '👍', reacted: false, count: 1 }, 'the same emoji again removes it');

    const toggles = (await log('rx-lurker', r.id)).filter((e) => e.type === 'reaction.toggled');
    assert.equal(toggles.length, 4);
    assert.deepEqual(toggles.map((e) => [e.visibility, e.data.reacted]), [['customer', true], ['customer', true], ['customer', true], ['customer', false]]);
    assert.deepEqual(await outboxEvents(tenant.organizationId, 'reaction.toggled'), [], 'no webhook');

    // Two distinct emoji are there; 18 more make 20.
    for (let i = 3; i <= 20; i += 1) assert.equal((await react('rx-peer', r.id, message.id, `e${i}`)).statusCode, 200, `emoji ${i}`);
    assert.equal(errorCode(await react('rx-peer', r.id, message.id, 'e21')), 'CONFLICT', 'a 21st distinct emoji');
    assert.equal((await react('rx-lurker', r.id, message.id, 'e20')).json().data.count, 2, 'an emoji already there still counts');

    assert.equal(errorCode(await react('rx-outsider', r.id, message.id, '👍')), 'FORBIDDEN', 'not joined');
    assert.equal((await react('rx-peer', r.id, 'msg_unknown00000000000', '👍')).statusCode, 404);
    assert.equal((await react('rx-owner', r.id, message.id, '👍', stranger)).statusCode, 404, 'another product');
    const note = await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/workspace/rooms/${r.id}/messages`,
      payload: { body: 'note', visibility: 'internal' } }));
    assert.equal((await react('rx-peer', r.id, note.json().data.id, '👍')).statusCode, 404, 'an internal message is not there for a customer');

    await asUser(tenant, 'rx-owner', { method: 'DELETE', url: `/api/v1/rooms/${r.id}/messages/${message.id}` });
    assert.equal(errorCode(await react('rx-peer', r.id, message.id, '👍')), 'CONFLICT', 'deleted');
  });

  it('message.edited and message.deleted enter the log with the message\'s visibility, without a webhook', async () => {
    const r = await room('ed-owner', 'ed-peer');
    const message = await say(tenant, 'ed-owner', r.id, 'first take');
    await asUser(tenant, 'ed-owner', { method: 'PATCH', url: `/api/v1/rooms/${r.id}/messages/${message.id}`, payload: { body: 'second take' } });
    await asUser(tenant, 'ed-owner', { method: 'DELETE', url: `/api/v1/rooms/${r.id}/messages/${message.id}` });
    const entries = (await log('ed-peer', r.id)).filter((e) => e.type.startsWith('message.'));
    assert.deepEqual(entries.map((e) => [e.type, e.visibility, e.data.messageId]),
      [['message.edited', 'customer', message.id], ['message.deleted', 'customer', message.id]]);
    assert.equal(entries[1].data.message.body, '', 'a deleted body is withheld');
    assert.deepEqual(await outboxEvents(tenant.organizationId, 'message.deleted'), []);
  });

  it('attachments: only the accepted types, sizes and names, bytes that match the type; own uploads attach to one message', async () => {
    const r = await room('at-owner', 'at-peer');
    const badType = await upload('at-owner', r.id, PNG, 'image/svg+xml');
    assert.equal(errorCode(badType), 'VALIDATION_FAILED');
    assert.equal(badType.json().error.details[0].path, 'content-type');
    assert.equal(errorCode(await upload('at-owner', r.id, PNG, undefined)), 'VALIDATION_FAILED', 'no content-type');
    assert.equal(errorCode(await upload('at-owner', r.id, Buffer.from('hi'), 'text/plain; charset=latin1')), 'VALIDATION_FAILED');
    assert.equal(errorCode(await upload('at-owner', r.id, Buffer.alloc(0), 'text/plain')), 'VALIDATION_FAILED', 'zero bytes');
    assert.equal(errorCode(await upload('at-owner', r.id, PDF, 'image/png')), 'VALIDATION_FAILED', 'PDF bytes declared as PNG');
    assert.equal(errorCode(await upload('at-owner', r.id, PNG, 'image/jpeg')), 'VALIDATION_FAILED', 'PNG bytes declared as JPEG');
    assert.equal(errorCode(await upload('at-owner', r.id, PNG, 'text/plain')), 'VALIDATION_FAILED', 'binary bytes declared as text');
    assert.equal(errorCode(await upload('at-owner', r.id, Buffer.from([0x68, 0xc3, 0x28]), 'text/plain')), 'VALIDATION_FAILED', 'invalid UTF-8');
    assert.equal(errorCode(await upload('at-owner', r.id, PNG, 'image/png', { 'x-filename': 'x'.repeat(201) })), 'VALIDATION_FAILED', 'a 201-character name');
    assert.equal(errorCode(await upload('at-outsider', r.id, PNG, 'image/png')), 'FORBIDDEN', 'not joined');
    assert.equal((await upload('at-owner', r.id, PNG, 'image/png', {}, stranger)).statusCode, 404, 'another product');

    const small = await ctx.buildApp({ roomAttachmentMaxBytes: PNG.length });
    const sized = (bytes: Buffer) => call({
      method: 'POST', url: `/api/v1/rooms/${r.id}/attachments`, payload: bytes,
      headers: { 'content-type': 'image/png', authorization: `Bearer ${endUserToken(tenant.product, { sub: 'at-owner' })}` },
    }, small);
    assert.equal((await sized(PNG)).statusCode, 201, 'exactly the limit');
    assert.equal(errorCode(await sized(Buffer.concat([PNG, Buffer.from([0])]))), 'VALIDATION_FAILED', 'one byte over SV_ROOM_ATTACHMENT_MAX_BYTES');

    const png = await upload('at-owner', r.id, PNG, 'image/png', { 'x-filename': 'réglage "1".png' });
    assert.equal(png.statusCode, 201, png.body);
    const attachment = png.json().data;
    assert.match(attachment.id, /^att_/);
    const owner = (await asUser(tenant, 'at-owner', { method: 'GET', url: `/api/v1/rooms/${r.id}` })).json().data.membership.principalId;
    assert.deepEqual({ ...attachment, id: undefined, createdAt: undefined }, {
      id: undefined, roomId: r.id, filename: 'réglage "1".png', contentType: 'image/png', size: PNG.length,
      sha256: createHash('sha256').update(PNG).digest('hex'), uploadedBy: owner, messageId: null, createdAt: undefined,
    });
    for (const [bytes, type] of [[PDF, 'application/pdf'], [GIF, 'image/gif'], [Buffer.from('naïve notes\n'), 'text/plain; charset=UTF-8']] as const) {
      assert.equal((await upload('at-owner', r.id, bytes, type)).statusCode, 201, type);
    }

    const mine = await download('at-owner', r.id, attachment.id);
    assert.equal(mine.statusCode, 200);
    assert.deepEqual(mine.rawPayload, PNG);
    assert.equal(mine.headers['content-type'], 'image/png');
    assert.equal(mine.headers['x-content-type-options'], 'nosniff');
    assert.equal(mine.headers['content-disposition'], `attachment; filename="r_glage _1_.png"; filename*=UTF-8''r%C3%A9glage%20%221%22.png`);
    const part = await download('at-owner', r.id, attachment.id, { range: 'bytes=0-7' });
    assert.equal(part.statusCode, 206);
    assert.deepEqual(part.rawPayload, PNG.subarray(0, 8));
    assert.equal((await download('at-peer', r.id, attachment.id)).statusCode, 404, 'unattached: only its uploader');
    assert.equal((await download('at-owner', r.id, attachment.id, {}, stranger)).statusCode, 404, 'another product');

    const peerUpload = (await upload('at-peer', r.id, PDF, 'application/pdf')).json().data;
    const notMine = await post('at-owner', r.id, { body: 'see attached', attachmentIds: [attachment.id, peerUpload.id] });
    assert.equal(errorCode(notMine), 'VALIDATION_FAILED');
    assert.deepEqual(notMine.json().error.details.map((d: Json) => d.path), ['attachmentIds[1]'], 'another member\'s upload');
    const other = await room('at-owner');
    const elsewhere = (await upload('at-owner', other.id, PNG, 'image/png')).json().data;
    assert.equal(errorCode(await post('at-owner', r.id, { body: 'x', attachmentIds: [elsewhere.id] })), 'VALIDATION_FAILED', 'another room\'s upload');
    assert.equal(errorCode(await post('at-owner', r.id, { body: 'x', attachmentIds: Array.from({ length: 11 }, (_, i) => `att_${i}`) })), 'VALIDATION_FAILED',
      'over 10');

    const posted = await post('at-owner', r.id, { body: 'see attached', attachmentIds: [attachment.id] });
    assert.equal(posted.statusCode, 201, posted.body);
    assert.deepEqual(posted.json().data.attachments.map((a: Json) => [a.id, a.messageId]), [[attachment.id, posted.json().data.id]]);
    assert.equal(errorCode(await post('at-owner', r.id, { body: 'again', attachmentIds: [attachment.id] })), 'VALIDATION_FAILED', 'already attached');
    assert.equal((await seenBy('at-peer', r.id, posted.json().data.id)).attachments[0].id, attachment.id);
    const seen = await download('at-peer', r.id, attachment.id);
    assert.equal(seen.statusCode, 200, 'whoever sees its message');
    assert.deepEqual(seen.rawPayload, PNG);
    assert.equal((await download('at-stranger', r.id, attachment.id)).statusCode, 404, 'not joined');
  });

  it('uploads no message took within 24 h are erased, bytes included, by the maintenance round', async () => {
    const r = await room('sw-owner');
    const stale = (await upload('sw-owner', r.id, PNG, 'image/png')).json().data;
    const fresh = (await upload('sw-owner', r.id, PNG, 'image/png')).json().data;
    const kept = (await upload('sw-owner', r.id, PNG, 'image/png')).json().data;
    await post('sw-owner', r.id, { body: 'kept', attachmentIds: [kept.id] });
    await ctx.dataSource.query(`UPDATE room_attachments SET created_at = now() - interval '25 hours' WHERE id = ANY($1)`, [[stale.id, kept.id]]);
    const [{ storage_key: key }] = await ctx.dataSource.query('SELECT storage_key FROM room_attachments WHERE id = $1', [stale.id]);
    const handle = await ctx.temporal.workflow.start(maintenanceWorkflow, {
      workflowId: `maintenance-test/${randomBytes(4).toString('hex')}`, taskQueue: ctx.config.taskQueue, args: [{ intervalMs: 200 }],
    });
    try {
      await eventually(async () => (await ctx.dataSource.query('SELECT 1 FROM room_attachments WHERE id = $1', [stale.id])).length === 0, 30_000);
    } finally {
      await handle.terminate('test done');
    }
    await assert.rejects(async () => readAll(await mediaStoreOf(ctx.config).read(key)), 'the bytes are gone');
    assert.equal((await download('sw-owner', r.id, stale.id)).statusCode, 404);
    assert.equal((await download('sw-owner', r.id, fresh.id)).statusCode, 200, 'a recent upload stays');
    assert.equal((await download('sw-owner', r.id, kept.id)).statusCode, 200, 'an attached one stays');
  });

  it('polls: 2–10 options of 1–100 characters; one answer per principal, a later one replaces it; counts for all', async () => {
    const r = await room('pl-owner', 'pl-a', 'pl-b');
    const bad = [
      { body: 'Which?', kind: 'poll' },
      { body: 'Which?', poll: { options: ['a', 'b'] } },
      { body: 'Which?', kind: 'text', poll: { options: ['a', 'b'] } },
      { body: 'Which?', kind: 'poll', poll: { options: ['a'] } },
      { body: 'Which?', kind: 'poll', poll: { options: Array.from({ length: 11 }, (_, i) => `o${i}`) } },
      { body: 'Which?', kind: 'poll', poll: { options: ['a', ''] } },
      { body: 'Which?', kind: 'poll', poll: { options: ['a', 'x'.repeat(101)] } },
      { body: 'Which?', kind: 'poll', poll: { options: ['a', 'b'], extra: 1 } },
    ];
    for (const payload of bad) assert.equal(errorCode(await post('pl-owner', r.id, payload)), 'VALIDATION_FAILED', JSON.stringify(payload));
    const ten = await post('pl-owner', r.id, { body: 'Ten?', kind: 'poll', poll: { options: Array.from({ length: 10 }, (_, i) => `${i}`.padEnd(100, '.')) } });
    assert.equal(ten.statusCode, 201, 'ten options of 100 characters');
    const created = await post('pl-owner', r.id, { body: 'Which export first?', kind: 'poll', poll: { options: ['CSV', 'Parquet', 'JSON'] } });
    assert.equal(created.statusCode, 201, created.body);
    const message = created.json().data;
    assert.equal(message.kind, 'poll');
    const pollId = message.poll.id;
    assert.deepEqual(message.poll, {
      id: pollId, roomId: r.id, totalResponses: 0, myOptionIndex: null,
      options: [{ index: 0, text: 'CSV', count: 0 }, { index: 1, text: 'Parquet', count: 0 }, { index: 2, text: 'JSON', count: 0 }],
    });
    for (const payload of [{}, { optionIndex: -1 }, { optionIndex: 1.5 }, { optionIndex: '1' }, { optionIndex: 1, extra: 1 }]) {
      assert.equal(errorCode(await answer('pl-a', r.id, pollId, payload)), 'VALIDATION_FAILED', JSON.stringify(payload));
    }
    const outOfRange = await answer('pl-a', r.id, pollId, { optionIndex: 3 });
    assert.equal(errorCode(outOfRange), 'VALIDATION_FAILED');
    assert.equal(outOfRange.json().error.details[0].path, 'optionIndex');

    const first = await answer('pl-a', r.id, pollId, { optionIndex: 0 });
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual([first.json().data.totalResponses, first.json().data.myOptionIndex], [1, 0]);
    await answer('pl-b', r.id, pollId, { optionIndex: 1 });
    const replaced = (await answer('pl-a', r.id, pollId, { optionIndex: 1 })).json().data;
    assert.deepEqual(replaced.options.map((o: Json) => o.count), [0, 2, 0], 'the later answer replaced the earlier');
    assert.deepEqual([replaced.totalResponses, replaced.myOptionIndex], [2, 1]);
    const ownerView = await seenBy('pl-owner', r.id, message.id);
    assert.deepEqual([ownerView.poll.totalResponses, ownerView.poll.myOptionIndex], [2, null]);
    const responded = (await log('pl-owner', r.id)).filter((e) => e.type === 'poll.responded');
    assert.deepEqual(responded.map((e) => [e.visibility, e.data.pollId]), [['customer', pollId], ['customer', pollId], ['customer', pollId]]);
    assert.deepEqual(await outboxEvents(tenant.organizationId, 'poll.responded'), [], 'no webhook');

    assert.equal(errorCode(await answer('pl-outsider', r.id, pollId, { optionIndex: 0 })), 'FORBIDDEN');
    assert.equal((await answer('pl-a', r.id, 'poll_unknown0000000000', { optionIndex: 0 })).statusCode, 404);
    assert.equal((await answer('pl-owner', r.id, pollId, { optionIndex: 0 }, stranger)).statusCode, 404, 'another product');
    const otherRoom = await room('pl-owner');
    assert.equal((await answer('pl-owner', otherRoom.id, pollId, { optionIndex: 0 })).statusCode, 404, 'another room\'s poll');

    await asUser(tenant, 'pl-owner', { method: 'DELETE', url: `/api/v1/rooms/${r.id}/messages/${message.id}` });
    assert.equal(errorCode(await answer('pl-b', r.id, pollId, { optionIndex: 0 })), 'CONFLICT', 'deleted');
  });

  it('moderation: distinct reporters hide a message at the threshold; only its author and internal readers see it or its case', async () => {
    const r = await room('md-author', 'md-r1', 'md-r2', 'md-r3', 'md-other');
    const upload1 = (await upload('md-author', r.id, PNG, 'image/png')).json().data;
    const message = (await post('md-author', r.id, { body: 'Buy cheap pills', attachmentIds: [upload1.id] })).json().data;
    for (const payload of [{ messageId: message.id }, { messageId: message.id, reason: 'rude' },
      { messageId: message.id, reason: 'spam', note: 'x'.repeat(1001) }, { reason: 'spam' }]) {
      assert.equal(errorCode(await report('md-r1', r.id, payload)), 'VALIDATION_FAILED', JSON.stringify(payload));
    }
    assert.equal(errorCode(await report('md-author', r.id, { messageId: message.id, reason: 'spam' })), 'FORBIDDEN', 'one\'s own message');
    assert.equal((await report('md-r1', r.id, { messageId: 'msg_unknown00000000000', reason: 'spam' })).statusCode, 404);
    assert.equal((await report('md-r1', r.id, { messageId: message.id, reason: 'spam' }, stranger)).statusCode, 404, 'another product');

    const first = await report('md-r1', r.id, { messageId: message.id, reason: 'spam', note: 'x'.repeat(1000) });
    assert.equal(first.statusCode, 201, first.body);
    const kase = first.json().data;
    assert.match(kase.id, /^mod_/);
    assert.deepEqual([kase.messageId, kase.reason, kase.state, kase.reportCount], [message.id, 'spam', 'open', 1]);
    const repeat = await report('md-r1', r.id, { messageId: message.id, reason: 'abuse' });
    assert.equal(repeat.statusCode, 200, 'the same reporter again');
    assert.deepEqual([repeat.json().data.id, repeat.json().data.reportCount], [kase.id, 1], 'counted once');
    const second = await report('md-r2', r.id, { messageId: message.id, reason: 'abuse' });
    assert.deepEqual([second.statusCode, second.json().data.id, second.json().data.state, second.json().data.reportCount], [201, kase.id, 'open', 2]);
    assert.equal((await seenBy('md-other', r.id, message.id)).hidden, false, 'below the threshold');
    assert.equal(errorCode(await appeal('md-author', r.id, kase.id, { statement: 'It is not spam' })), 'CONFLICT', 'an open case is not appealable');

    const third = (await report('md-r3', r.id, { messageId: message.id, reason: 'spam' })).json().data;
    assert.deepEqual([third.state, third.reportCount], ['actioned', 3]);
    const customer = await seenBy('md-other', r.id, message.id);
    assert.deepEqual([customer.hidden, customer.body, customer.moderationCaseId, customer.attachments], [true, '', null, []]);
    assert.equal((await download('md-other', r.id, upload1.id)).statusCode, 404, 'a hidden message\'s attachment');
    const author = await seenBy('md-author', r.id, message.id);
    assert.deepEqual([author.hidden, author.body, author.moderationCaseId], [true, 'Buy cheap pills', kase.id]);
    const team = await seenBy(null, r.id, message.id);
    assert.deepEqual([team.body, team.moderationCaseId], ['Buy cheap pills', kase.id]);
    const snapshot = (await asUser(tenant, 'md-r1', { method: 'GET', url: `/api/v1/rooms/${r.id}/events` })).json().data.snapshot;
    assert.equal(snapshot.messages.find((m: Json) => m.id === message.id).body, '', 'nor in a snapshot');
    const searched = (await asUser(tenant, 'md-other', { method: 'GET', url: `/api/v1/rooms/search?q=cheap%20pills` })).json().data;
    assert.ok(!searched.some((h: Json) => h.room.id === r.id), 'nor in search');

    const otherLog = await log('md-other', r.id);
    assert.ok(!JSON.stringify(otherLog).includes('Buy cheap pills'), 'the hidden text never reaches another customer');
    assert.ok(!JSON.stringify(otherLog).includes(kase.id), 'nor the case id');
    assert.deepEqual(otherLog.filter((e) => e.type === 'message.hidden').map((e) => [e.visibility, e.data.messageId]), [['customer', message.id]]);
    assert.ok(!otherLog.some((e) => e.type === 'moderation.reported'), 'reports are internal');
    assert.deepEqual((await log('md-r1', r.id)).filter((e) => e.type === 'moderation.reported').map((e) => e.data.reportCount), [1],
      'a reporter sees its own report');
    assert.equal((await teamLog(r.id)).filter((e) => e.type === 'moderation.reported').length, 3);
    assert.equal((await report('md-other', r.id, { messageId: message.id, reason: 'other' })).json().data.state, 'actioned', 'a later report changes nothing');

    for (const payload of [{}, { statement: '' }, { statement: 'x'.repeat(2001) }, { statement: 'ok', extra: 1 }]) {
      assert.equal(errorCode(await appeal('md-author', r.id, kase.id, payload)), 'VALIDATION_FAILED', JSON.stringify(payload));
    }
    assert.equal(errorCode(await appeal('md-r1', r.id, kase.id, { statement: 'Unfair' })), 'FORBIDDEN', 'only the author appeals');
    assert.equal((await appeal('md-author', r.id, 'mod_unknown00000000000', { statement: 'x' })).statusCode, 404);
    assert.equal((await appeal('md-author', r.id, kase.id, { statement: 'x' }, stranger)).statusCode, 404, 'another product');
    const appealed = await appeal('md-author', r.id, kase.id, { statement: 'x'.repeat(2000) });
    assert.equal(appealed.statusCode, 201, appealed.body);
    const { approvalId, ...rest } = appealed.json().data;
    assert.deepEqual({ ...rest, id: undefined }, { id: undefined, roomId: r.id, caseId: kase.id, statement: 'x'.repeat(2000) });
    assert.equal(errorCode(await appeal('md-author', r.id, kase.id, { statement: 'again' })), 'CONFLICT', 'the case is appealed now');
    assert.equal((await report('md-other', r.id, { messageId: message.id, reason: 'other' })).json().data.state, 'appealed');

    const mine = (await asUser(tenant, 'md-author', { method: 'GET', url: '/api/v1/approvals?kind=appeal' })).json().data;
    assert.deepEqual(mine.map((a: Json) => [a.id, a.kind, a.status, a.subjectId, a.expiresAt]),
      [[approvalId, 'appeal', 'pending', appealed.json().data.id, null]]);
    assert.deepEqual((await asUser(tenant, 'md-r1', { method: 'GET', url: '/api/v1/approvals?kind=appeal' })).json().data, []);
    const authorLog = await log('md-author', r.id);
    assert.ok(authorLog.some((e) => e.type === 'moderation.appealed' && e.data.caseId === kase.id), 'the author sees its own appeal');
    assert.ok(!(await log('md-r1', r.id)).some((e) => e.type === 'moderation.appealed'));

    const byKey = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/approvals/${approvalId}/approve`, payload: {} }));
    assert.equal(errorCode(byKey), 'HUMAN_APPROVAL_REQUIRED');
    const byUser = await asUser(tenant, 'md-author', { method: 'POST', url: `/api/v1/approvals/${approvalId}/approve`, payload: {} });
    assert.equal(errorCode(byUser), 'FORBIDDEN');
    assert.equal((await seenBy('md-other', r.id, message.id)).hidden, true, 'refusals change nothing');
    const approved = await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/v1/approvals/${approvalId}/approve`, payload: { note: 'fair' } }));
    assert.equal(approved.statusCode, 200, approved.body);
    const restored = await seenBy('md-other', r.id, message.id);
    assert.deepEqual([restored.hidden, restored.body, restored.attachments.length], [false, 'Buy cheap pills', 1]);
    assert.equal((await download('md-other', r.id, upload1.id)).statusCode, 200);
    assert.deepEqual((await log('md-other', r.id)).filter((e) => e.type === 'message.restored').map((e) => e.data.messageId), [message.id]);
    assert.equal((await report('md-r3', r.id, { messageId: message.id, reason: 'spam' })).json().data.state, 'reversed');
    assert.equal(errorCode(await appeal('md-author', r.id, kase.id, { statement: 'again' })), 'CONFLICT', 'reversed');
  });

  it('a rejected appeal upholds the case and the message stays hidden', async () => {
    const app = await ctx.buildApp({ roomReportThreshold: 1 });
    const as = (sub: string, opts: InjectOptions) => call({ ...opts, headers: { ...opts.headers,
      authorization: `Bearer ${endUserToken(tenant.product, { sub })}` } }, app);
    const r = await room('up-author', 'up-reporter');
    const message = await say(tenant, 'up-author', r.id, 'borderline');
    const kase = (await as('up-reporter', { method: 'POST', url: `/api/v1/rooms/${r.id}/moderation/reports`,
      payload: { messageId: message.id, reason: 'harassment' } })).json().data;
    assert.deepEqual([kase.state, kase.reportCount], ['actioned', 1], 'SV_ROOM_REPORT_THRESHOLD 1: one report hides');
    const { approvalId } = (await appeal('up-author', r.id, kase.id, { statement: 'Context matters' })).json().data;
    const rejected = await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/v1/approvals/${approvalId}/reject`, payload: { reason: 'no' } }));
    assert.equal(rejected.json().data.status, 'rejected');
    const seen = await seenBy('up-reporter', r.id, message.id);
    assert.deepEqual([seen.hidden, seen.body], [true, '']);
    assert.equal((await report('md-x', r.id, { messageId: message.id, reason: 'spam' })).statusCode, 403, 'not joined');
    await join('up-late', r.id);
    assert.equal((await report('up-late', r.id, { messageId: message.id, reason: 'spam' })).json().data.state, 'upheld');
    assert.equal(errorCode(await appeal('up-author', r.id, kase.id, { statement: 'again' })), 'CONFLICT', 'upheld');
    assert.equal(errorCode(await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/v1/approvals/${approvalId}/approve`, payload: {} }))), 'CONFLICT',
      'decided already');
  });

  it('an archived room takes no reactions, uploads, answers, reports or appeals', async () => {
    const r = await room('ar-owner', 'ar-peer');
    const message = await say(tenant, 'ar-peer', r.id, 'hello');
    const poll = (await post('ar-owner', r.id, { body: 'Q?', kind: 'poll', poll: { options: ['a', 'b'] } })).json().data.poll;
    await asUser(tenant, 'ar-owner', { method: 'PATCH', url: `/api/v1/rooms/${r.id}`, payload: { status: 'archived' } });
    assert.equal(errorCode(await react('ar-owner', r.id, message.id, '👍')), 'CONFLICT');
    assert.equal(errorCode(await upload('ar-owner', r.id, PNG, 'image/png')), 'CONFLICT');
    assert.equal(errorCode(await answer('ar-peer', r.id, poll.id, { optionIndex: 0 })), 'CONFLICT');
    assert.equal(errorCode(await report('ar-owner', r.id, { messageId: message.id, reason: 'spam' })), 'CONFLICT');
    assert.equal((await asKey(tenant, { method: 'GET', url: `/api/v1/rooms/${r.id}/members` })).statusCode, 200);
  });
});

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { outboxEvents } from '../support/customer-loop';
import { Tenant, asTeammate, call, errorCode, withKey } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { asKey, asUser, openRoom, roomsTenant, say } from '../support/rooms';
import { route } from '../support/routes';

type Json = Record<string, any>;

describe('rooms: compile and promote', function () {
  this.timeout(60_000);
  let tenant: Tenant;

  before(async () => {
    tenant = await roomsTenant();
  });

  const compile = (roomId: string, payload: Json) => asKey(tenant, { method: 'POST', url: route('/api/v1/rooms/{id}/compile', { id: roomId }), payload });

  it('compiles a PRD citing only customer-visible evidence; citations outside it are removed with the reason', async () => {
    const title = `PRD ${randomBytes(4).toString('hex')}`;
    const room = await openRoom(tenant, 'author');
    const first = await say(tenant, 'author', room.id, 'Exports time out at 10k rows');
    const second = await say(tenant, 'author', room.id, 'We need CSV streaming');
    const note = (await call(asTeammate(tenant.owner, {
      method: 'POST', url: `/api/workspace/rooms/${room.id}/messages`, payload: { body: 'Internal: big customer', visibility: 'internal' },
    }))).json().data;
    const elsewhere = await openRoom(tenant, 'author');
    const foreign = await say(tenant, 'author', elsewhere.id, 'Another room');
    ctx.fakeAi.when(title, {
      json: {
        title,
        statements: [
          { section: 'Problem', text: 'Exports time out on large projects.', citations: [first.id, note.id] },
          { section: 'Need', text: 'Stream CSV exports.', citations: [second.id, foreign.id, 'msg_madeup0000000'] },
          { section: 'Scope', text: 'Only for big customers.', citations: [note.id] },
        ],
      },
    });
    const res = await compile(room.id, { title, maxStatements: 10 });
    assert.equal(res.statusCode, 201, res.body);
    const doc = res.json().data;
    assert.match(doc.id, /^doc_/);
    const commands = await ctx.dataSource.query('SELECT command FROM workflow_commands WHERE ordering_key = $1', [`room-compile/${doc.id}`]);
    assert.deepEqual(commands.map((r: Json) => r.command.type), ['room.compile.start'],
      'the run is also asked for through the outbox, in the document\'s transaction');
    assert.deepEqual(doc.statements.map((s: Json) => [s.section, s.citations]), [
      ['Problem', [{ type: 'message', id: first.id }]], ['Need', [{ type: 'message', id: second.id }]],
    ]);
    assert.deepEqual(doc.rejected, [{ text: 'Only for big customers.', reason: 'no_valid_citation' }]);
    assert.deepEqual(doc.removedCitations, [
      { id: note.id, reason: 'internal' }, { id: foreign.id, reason: 'not_evidence' }, { id: 'msg_madeup0000000', reason: 'unknown' },
      { id: note.id, reason: 'internal' },
    ]);
    assert.equal(doc.model.name, 'fake-model');
    const prompt = ctx.fakeAi.prompts.find((p) => p.includes(title))!;
    assert.ok(!prompt.includes('Internal: big customer'), 'internal messages are never evidence');

    const promoted = await asKey(tenant, { method: 'POST', url: `/api/v1/rooms/${room.id}/promote`, payload: { documentId: doc.id } });
    assert.equal(promoted.statusCode, 202, promoted.body);
    const { knowledge, approval } = promoted.json().data;
    assert.deepEqual([knowledge.state, knowledge.documentId, approval.kind, approval.status], ['pending_approval', doc.id, 'knowledge', 'pending']);
    assert.deepEqual(knowledge.sourceIds.sort(), [first.id, second.id].sort());
    const log = (await call(asTeammate(tenant.owner, { method: 'GET', url: `/api/workspace/rooms/${room.id}/events?after=0` }))).json().data.events;
    assert.ok(log.some((e: Json) => e.type === 'approval.requested' && e.data.approvalId === approval.id && e.data.kind === 'knowledge'),
      'a knowledge approval is requested in the log like every other kind (docs/rooms.md#room-webhooks)');
    assert.equal(errorCode(await asKey(tenant, { method: 'POST', url: `/api/v1/approvals/${approval.id}/approve`, payload: {} })), 'HUMAN_APPROVAL_REQUIRED');
    assert.deepEqual((await outboxEvents(tenant.organizationId, 'room.knowledge.published')).filter((e) => e.payload.roomId === room.id), [],
      'nothing published yet');
    const approved = await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/v1/approvals/${approval.id}/approve`, payload: { note: 'ok' } }));
    assert.equal(approved.statusCode, 200, approved.body);
    const published = (await outboxEvents(tenant.organizationId, 'room.knowledge.published')).filter((e) => e.payload.roomId === room.id);
    assert.deepEqual(published.map((e) => [e.payload.knowledgeId, e.payload.approvalId]), [[knowledge.id, approval.id]]);
  });

  it('422 CITATION_VALIDATION_FAILED without evidence (provider not called) or when nothing cited survives; 503 when the provider fails', async () => {
    const empty = await openRoom(tenant, 'quiet');
    const before = ctx.fakeAi.requests.length;
    const none = await compile(empty.id, { title: 'Nothing here' });
    assert.equal(errorCode(none), 'CITATION_VALIDATION_FAILED');
    assert.deepEqual(none.json().error.details.rejected, []);
    assert.equal(ctx.fakeAi.requests.length, before, 'the provider was not asked');

    const room = await openRoom(tenant, 'liar');
    await say(tenant, 'liar', room.id, 'Search is slow');
    const title = `Made up ${randomBytes(4).toString('hex')}`;
    ctx.fakeAi.when(title, { json: { title, statements: [{ section: 'Claim', text: 'Users love it.', citations: ['sig_invented000000'] }] } });
    const invented = await compile(room.id, { title });
    assert.equal(errorCode(invented), 'CITATION_VALIDATION_FAILED');
    assert.deepEqual(invented.json().error.details.rejected, [{ text: 'Users love it.', reason: 'no_valid_citation' }]);

    const broken = `Broken ${randomBytes(4).toString('hex')}`;
    ctx.fakeAi.when(broken, { status: 500 });
    assert.equal(errorCode(await compile(room.id, { title: broken })), 'AI_UNAVAILABLE');
    const garbled = `Garbled ${randomBytes(4).toString('hex')}`;
    ctx.fakeAi.when(garbled, { content: 'not json at all' });
    assert.equal(errorCode(await compile(room.id, { title: garbled })), 'AI_UNAVAILABLE', 'unparseable output is a provider failure');
    for (const payload of [{}, { title: 'ab' }, { title: 'ok title', maxStatements: 51 }, { title: 'ok title', extra: 1 }]) {
      assert.equal(errorCode(await compile(room.id, payload)), 'VALIDATION_FAILED');
    }
    assert.equal(errorCode(await asUser(tenant, 'liar', { method: 'POST', url: `/api/v1/rooms/${room.id}/compile`, payload: { title: 'mine' } })), 'FORBIDDEN');
    const stranger = await roomsTenant();
    assert.equal((await call(withKey(stranger.key, { method: 'POST', url: `/api/v1/rooms/${room.id}/compile`, payload: { title: 'theirs' } }))).statusCode,
      404);

    // The evidence is checked before the provider: a room without any is 422 with or without one, and 503
    // comes only where the provider would be called.
    const unconfigured = await ctx.buildApp({ aiBaseUrl: undefined });
    const silent = await openRoom(tenant, 'quiet');
    for (const app of [ctx.app, unconfigured]) {
      const empty = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/rooms/${silent.id}/compile`, payload: { title: 'Nothing said' } }), app);
      assert.equal(empty.statusCode, 422, empty.body);
      assert.equal(errorCode(empty), 'CITATION_VALIDATION_FAILED');
    }
    const offline = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/rooms/${room.id}/compile`, payload: { title: 'Some evidence' } }),
      unconfigured);
    assert.equal(errorCode(offline), 'AI_UNAVAILABLE');
  });

  it('promote from given text: sources must be this room\'s messages; a rejection never publishes', async () => {
    const room = await openRoom(tenant, 'teacher');
    const message = await say(tenant, 'teacher', room.id, 'Use the bulk export button');
    const promote = (payload: Json) => asKey(tenant, { method: 'POST', url: route('/api/v1/rooms/{id}/promote', { id: room.id }), payload });
    assert.equal(errorCode(await promote({ title: 'Only a title' })), 'VALIDATION_FAILED');
    assert.equal(errorCode(await promote({ documentId: 'doc_unknown00000000' })), 'VALIDATION_FAILED');
    const bad = await promote({ title: 'Bulk export', body: 'How to', sourceMessageIds: ['msg_other000000000'] });
    assert.equal(bad.json().error.details[0].path, 'sourceMessageIds[0]');
    const res = await promote({ title: 'Bulk export', body: 'Use the bulk export button.', sourceMessageIds: [message.id] });
    assert.equal(res.statusCode, 202, res.body);
    const { knowledge, approval } = res.json().data;
    assert.deepEqual([knowledge.documentId, knowledge.sourceIds], [null, [message.id]]);
    const rejected = await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/v1/approvals/${approval.id}/reject`, payload: { reason: 'Outdated' } }));
    assert.equal(rejected.json().data.status, 'rejected');
    assert.deepEqual((await outboxEvents(tenant.organizationId, 'room.knowledge.published')).filter((e) => e.payload.roomId === room.id), []);
    const state: Array<{ state: string }> = await ctx.dataSource.query('SELECT state FROM room_knowledge WHERE id = $1', [knowledge.id]);
    assert.equal(state[0].state, 'rejected');
  });
});

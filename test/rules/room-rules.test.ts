import assert from 'node:assert/strict';
import {
  agentOutputFits, attachmentDisposition, attachmentTypeCheck, declaredAttachmentType, emojiValid, eventVisibleTo, filenameProblem, needsSnapshot,
  principalIdOf, reportsHide, roomStatusMoveAllowed, sideEffectOf,
} from '../../db/rules/room-rules';
import { ID_PATTERN } from '../../db/rules/ids';

describe('room rules', () => {
  it('principal ids are stable per product and principal, distinct across products and types, and look like our ids', () => {
    const id = principalIdOf('prd_1', 'end_user', 'ada');
    assert.equal(id, principalIdOf('prd_1', 'end_user', 'ada'));
    assert.notEqual(id, principalIdOf('prd_2', 'end_user', 'ada'));
    assert.notEqual(id, principalIdOf('prd_1', 'teammate', 'ada'));
    assert.match(id, /^prn_/);
    assert.match(id, ID_PATTERN);
  });

  it('status moves: open ⇄ waiting, open/waiting → resolved → open, anything → archived, nothing out of archived', () => {
    const allowed: Array<[string, string]> = [];
    const all = ['open', 'waiting', 'resolved', 'archived'] as const;
    for (const from of all) for (const to of all) if (from !== to && roomStatusMoveAllowed(from, to)) allowed.push([from, to]);
    assert.deepEqual(allowed, [
      ['open', 'waiting'], ['open', 'resolved'], ['open', 'archived'], ['waiting', 'open'], ['waiting', 'resolved'], ['waiting', 'archived'],
      ['resolved', 'open'], ['resolved', 'archived'],
    ]);
    assert.ok(roomStatusMoveAllowed('archived', 'archived'), 'the same value is no move');
  });

  it('snapshot rule: no after, more than the threshold behind, or behind compaction', () => {
    assert.ok(needsSnapshot(undefined, 0, 500, 0));
    assert.ok(needsSnapshot(0, 501, 500, 0));
    assert.ok(!needsSnapshot(1, 501, 500, 0));
    assert.ok(needsSnapshot(10, 20, 500, 11));
    assert.ok(!needsSnapshot(11, 20, 500, 11));
  });

  it('customers read customer entries and internal ones addressed to them; internal readers read all', () => {
    const customer = { internal: false, principalId: 'prn_a' };
    assert.ok(eventVisibleTo(customer, { visibility: 'customer', audiencePrincipalId: null }));
    assert.ok(eventVisibleTo(customer, { visibility: 'internal', audiencePrincipalId: 'prn_a' }));
    assert.ok(!eventVisibleTo(customer, { visibility: 'internal', audiencePrincipalId: 'prn_b' }));
    assert.ok(!eventVisibleTo(customer, { visibility: 'internal', audiencePrincipalId: null }));
    assert.ok(eventVisibleTo({ internal: true, principalId: null }, { visibility: 'internal', audiencePrincipalId: null }));
  });

  it('side effects: the assistant needs approval only for customer messages, the editor always; outputs must fit', () => {
    assert.deepEqual(sideEffectOf('assistant', 'customer'), { action: 'post_message', needsApproval: true });
    assert.deepEqual(sideEffectOf('assistant', 'internal'), { action: 'post_message', needsApproval: false });
    assert.deepEqual(sideEffectOf('editor', 'internal'), { action: 'update_canvas', needsApproval: true });
    assert.ok(!agentOutputFits('assistant', ''));
    assert.ok(!agentOutputFits('assistant', 'x'.repeat(4001)));
    assert.ok(agentOutputFits('editor', ''));
    assert.ok(!agentOutputFits('editor', 'x'.repeat(100_001)));
  });

  it('emoji: 1–32 characters counted as code points, no whitespace or control characters', () => {
    for (const ok of ['👍', '👍'.repeat(32), ':+1:', 'x'.repeat(32)]) assert.ok(emojiValid(ok), ok);
    for (const bad of ['', '👍'.repeat(33), 'a b', 'a\u00a0b', 'a\nb', 'a\u0007']) assert.ok(!emojiValid(bad), JSON.stringify(bad));
  });

  it('attachment types: the six accepted ones, text/plain only as UTF-8; bytes must sniff as the declared type', () => {
    const bytesMatchType = (type: Parameters<typeof attachmentTypeCheck>[0], sniffed: string | undefined, bytes: Buffer) => {
      const check = attachmentTypeCheck(type);
      return check.head(sniffed) && check.chunk(bytes) && check.end();
    };
    assert.deepEqual(declaredAttachmentType('image/PNG'), { type: 'image/png' });
    assert.deepEqual(declaredAttachmentType('text/plain; charset="UTF-8"'), { type: 'text/plain' });
    assert.deepEqual(declaredAttachmentType('text/plain'), { type: 'text/plain' }, 'UTF-8 is the default');
    for (const bad of [undefined, '', 'image/svg+xml', 'text/html', 'text/plain; charset=latin1', 'image/png; charset=utf-8', 'application/octet-stream']) {
      assert.ok('problem' in declaredAttachmentType(bad), String(bad));
    }
    assert.ok(bytesMatchType('image/png', 'image/png', Buffer.from('x')));
    assert.ok(!bytesMatchType('image/png', 'image/jpeg', Buffer.from('x')));
    assert.ok(!bytesMatchType('application/pdf', undefined, Buffer.from('x')));
    assert.ok(bytesMatchType('text/plain', undefined, Buffer.from('naïve ✓')));
    assert.ok(!bytesMatchType('text/plain', 'image/png', Buffer.from('x')), 'a known binary type is not text');
    assert.ok(!bytesMatchType('text/plain', undefined, Buffer.from([0x61, 0x00])), 'NUL');
    assert.ok(!bytesMatchType('text/plain', undefined, Buffer.from([0xc3, 0x28])), 'invalid UTF-8');
    const split = attachmentTypeCheck('text/plain');
    const tick = Buffer.from('✓');
    assert.ok(split.chunk(tick.subarray(0, 1)) && split.chunk(tick.subarray(1)) && split.end(), 'a character split across chunks');
    const cut = attachmentTypeCheck('text/plain');
    assert.ok(cut.chunk(tick.subarray(0, 2)) && !cut.end(), 'text that ends inside a character');
  });

  it('filenames: at most 200 characters without control characters; served as an attachment with an exact UTF-8 name', () => {
    assert.equal(filenameProblem('a'.repeat(200)), null);
    assert.notEqual(filenameProblem('a'.repeat(201)), null);
    assert.notEqual(filenameProblem(''), null);
    assert.notEqual(filenameProblem('a\rb'), null);
    assert.equal(attachmentDisposition(null), 'attachment');
    assert.equal(attachmentDisposition('plan.pdf'), `attachment; filename="plan.pdf"; filename*=UTF-8''plan.pdf`);
    assert.equal(attachmentDisposition('ü\\"%\'.txt'), `attachment; filename="____'.txt"; filename*=UTF-8''%C3%BC%5C%22%25%27.txt`);
  });

  it('moderation: an open case hides its message when the reporters reach the threshold, no other state does', () => {
    assert.ok(!reportsHide('open', 2, 3));
    assert.ok(reportsHide('open', 3, 3));
    for (const state of ['actioned', 'appealed', 'reversed', 'upheld']) assert.ok(!reportsHide(state, 10, 3), state);
  });
});

import assert from 'node:assert/strict';
import { agentOutputFits, eventVisibleTo, needsSnapshot, principalIdOf, roomStatusMoveAllowed, sideEffectOf } from '../../db/rules/room-rules';
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
});

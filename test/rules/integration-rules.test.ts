import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { normaliseDeals } from '../../db/rules/crm-deals';
import { consentedAttribution, displayName } from '../../db/rules/source-attribution';
import { invoiceMilestone, isStripeEvent, mapStripeEvent, monthlyAmount, stripeSignatureProblem } from '../../db/rules/stripe-events';
import { valueEventIssues, valueEventStrength } from '../../db/rules/value-events';

const NOW = Date.parse('2026-03-01T12:00:00Z');

describe('rules: value events', () => {
  const base = { eventId: 'evt-12345678', occurredAt: '2026-03-01T11:00:00Z', personRef: 'cus_1' };

  it('accepts a valid body of every type and refuses what the schema cannot say', () => {
    assert.deepEqual(valueEventIssues({ ...base, type: 'milestone', properties: { name: 'x' } }, NOW), []);
    assert.deepEqual(valueEventIssues({ ...base, type: 'score', properties: { scale: 'csat', value: 1 } }, NOW), []);
    const paths = (b: object) => valueEventIssues(b as never, NOW).map((i) => i.path);
    assert.deepEqual(paths({ ...base, type: 'score', properties: { scale: 'csat', value: 0 } }), ['properties.value']);
    assert.deepEqual(paths({ ...base, type: 'score', properties: { scale: 'ces', value: 8 } }), ['properties.value']);
    assert.deepEqual(paths({ ...base, type: 'purchase', properties: { amount: -1, currency: 'usd' } }), ['properties.amount']);
    assert.deepEqual(paths({ ...base, personRef: undefined, type: 'milestone', properties: { name: 'x' } }), ['personRef']);
    assert.deepEqual(paths({ ...base, occurredAt: '2026-03-01T12:06:00Z', type: 'milestone', properties: { name: 'x' } }), ['occurredAt']);
    assert.deepEqual(paths({ ...base, occurredAt: '2026-03-01T12:04:00+00:00', type: 'milestone', properties: { name: 'x' } }), []);
    assert.deepEqual(paths({ ...base, type: 'milestone', properties: { name: 'x', long: 'y'.repeat(1001) } }), ['properties.long']);
  });

  it('scores by type and recent events only, capped at 100', () => {
    assert.deepEqual(['milestone', 'plan_upgrade', 'shipped_feature', 'purchase', 'resolved_ticket', 'score'].map((t) =>
      valueEventStrength(t as never, 0, false)), [80, 80, 70, 60, 60, 60]);
    assert.equal(valueEventStrength('purchase', 0, true), 60, 'feature interest counts only for a shipped feature');
    assert.equal(valueEventStrength('shipped_feature', 3, true), 100);
    assert.equal(valueEventStrength('score', 7, false), 90);
  });
});

describe('rules: payment processor events', () => {
  const secret = 'whsec_abc';
  const body = Buffer.from('{"id":"evt_1"}');
  const header = (t: number, s = secret) => `t=${t},v1=${createHmac('sha256', s).update(`${t}.${body.toString()}`).digest('hex')}`;

  it('verifies the v1 scheme with the tolerance both ways', () => {
    const now = 1_800_000_000;
    assert.equal(stripeSignatureProblem(header(now), body, secret, now), null);
    assert.equal(stripeSignatureProblem(header(now - 300), body, secret, now), null);
    assert.match(stripeSignatureProblem(header(now - 301), body, secret, now)!, /tolerance/);
    assert.match(stripeSignatureProblem(header(now + 301), body, secret, now)!, /future/);
    assert.match(stripeSignatureProblem(header(now, 'whsec_other'), body, secret, now)!, /no signature/);
    assert.match(stripeSignatureProblem(undefined, body, secret, now)!, /missing/);
    assert.match(stripeSignatureProblem(header(now), body, null, now)!, /no signing secret/);
    assert.match(stripeSignatureProblem(`t=${now}`, body, secret, now)!, /unable to extract/);
  });

  it('maps only paid checkouts, rising subscriptions and invoice milestones', () => {
    const ev = (type: string, object: object, extra: object = {}) => ({ id: 'evt_1', type, created: 1_700_000_000, data: { object, ...extra } });
    assert.equal(isStripeEvent(ev('x', {})), true);
    assert.equal(isStripeEvent({ id: 'evt_1', type: 'x', created: 1.5, data: { object: {} } }), false);
    assert.equal(mapStripeEvent(ev('checkout.session.completed', { customer: 'cus_1', payment_status: 'unpaid' })), null);
    assert.equal(mapStripeEvent(ev('checkout.session.completed', { payment_status: 'paid' })), null, 'no person, no value event');
    assert.equal(mapStripeEvent(ev('checkout.session.completed', { customer: { id: 'cus_1' }, payment_status: 'paid', amount_total: 5 }))?.personRef, 'cus_1');
    assert.equal(monthlyAmount({ data: [{ plan: { amount: 1200, interval: 'year' }, quantity: 1 }] }, undefined, undefined), 100);
    const up = mapStripeEvent(ev('customer.subscription.updated', { customer: 'c', plan: { id: 'p2', amount: 2000, interval: 'month' }, quantity: 1 },
      { previous_attributes: { plan: { id: 'p1', amount: 1000, interval: 'month' } } }));
    assert.deepEqual(up?.properties, { fromPlan: 'p1', toPlan: 'p2', fromAmount: 1000, toAmount: 2000, currency: null, subscriptionId: null });
    assert.equal(invoiceMilestone(ev('invoice.paid', { id: 'in_1', customer: 'c', amount_paid: 10, currency: 'usd' }), 3)?.properties?.count, 3);
  });
});

describe('rules: CRM deals', () => {
  it('derives status per vendor and refuses unknown generic fields', () => {
    const hs = (p: object) => normaliseDeals('hubspot', [{ id: '1', properties: p }]).deals[0].status;
    assert.equal(hs({ hs_is_closed_won: 'true' }), 'won');
    assert.equal(hs({ hs_is_closed: 'true' }), 'lost');
    assert.equal(hs({ dealstage: 'closedlost' }), 'lost');
    assert.equal(hs({ dealstage: 'appointmentscheduled' }), 'open');
    const sf = (d: object) => normaliseDeals('salesforce', [{ Id: '1', ...d }]).deals[0].status;
    assert.equal(sf({ IsWon: true, IsClosed: true }), 'won');
    assert.equal(sf({ IsClosed: true }), 'lost');
    assert.equal(sf({ StageName: 'Closed Won' }), 'won');
    assert.deepEqual(normaliseDeals('salesforce', [{ Id: '1', SV_Proof_Item_Ids__c: 'a; b;a' }]).deals[0].proofItemIds, ['a', 'b']);
    assert.deepEqual(normaliseDeals('generic', [{ id: '1', extra: 1 }]).issues.map((i) => i.path), ['deals[0].extra']);
    assert.deepEqual(normaliseDeals('hubspot', [{ id: '1', extra: 1 }]).issues, []);
  });
});

describe('rules: source attribution', () => {
  it('shows only consented fields with the display mode applied', () => {
    const attribution = { name: 'Ada Lovelace', company: 'Analytical Ltd', title: 'CTO' };
    assert.deepEqual(consentedAttribution(attribution, { displayMode: 'full_name', identityFields: ['name'] }), { name: 'Ada Lovelace' });
    assert.deepEqual(consentedAttribution(attribution, { displayMode: 'initials', identityFields: ['name', 'title'] }), { name: 'A.L.', title: 'CTO' });
    assert.deepEqual(consentedAttribution(attribution, { displayMode: 'anonymous', identityFields: ['name', 'company'] }), { company: 'Analytical Ltd' });
  });

  it('is total: a name of only whitespace shows no name in any mode, and initials keep a whole first character', () => {
    for (const displayMode of ['full_name', 'first_name', 'initials', 'anonymous', 'unknown']) {
      for (const name of ['   ', '\t\n', '\u00a0']) {
        assert.deepEqual(consentedAttribution({ name, company: 'Analytical Ltd' }, { displayMode, identityFields: ['name', 'company'] }),
          { company: 'Analytical Ltd' }, `${displayMode} ${JSON.stringify(name)}`);
        assert.equal(displayName(name, displayMode, ' '), '');
      }
    }
    assert.equal(displayName('  ada   lovelace ', 'initials'), 'A.L.');
    assert.equal(displayName('ada lovelace', 'initials', ' '), 'A. L.');
    assert.equal(displayName('\u{1F600}mile ada', 'initials'), '\u{1F600}.A.');
    assert.equal(displayName(' ada lovelace', 'first_name'), 'ada');
  });
});

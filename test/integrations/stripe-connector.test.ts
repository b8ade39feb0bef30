import assert from 'node:assert/strict';
import Stripe from 'stripe';
import { sealPlaintextSigningSecrets } from '../../db/migrations/1763713400000-StreamCopiesContactPreferencesSealedPaymentSecrets';
import { monthlyAmount } from '../../db/rules/stripe-events';
import { isSealed, openSecret } from '../../runtime/secret-box';
import { call, createTenant, errorCode, withKey } from '../support/fixtures';
import { IntegrationTenant, asOwner, createIntegrationTenant, uniqueId } from '../support/integrations';
import { ctx } from '../support/root-hooks';

const stripe = new Stripe('sk_test_unused');
const SECRET = 'whsec_test_secret_0123456789abcdef';

function signed(payload: string, secret = SECRET, timestamp?: number): string {
  return stripe.webhooks.generateTestHeaderString({ payload, secret, ...(timestamp === undefined ? {} : { timestamp }) });
}

function stripeEvent(type: string, object: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { id: uniqueId('evt'), object: 'event', type, created: Math.floor(Date.now() / 1000) - 10, data: { object, ...extra } };
}

describe('integrations: payment connector', () => {
  let tenant: IntegrationTenant;
  let connection: { id: string };
  let token: string;
  const deliver = (payload: string, header?: string, t = token) =>
    call({ method: 'POST', url: `/api/public/proof/stripe/${t}`, payload,
      headers: { 'content-type': 'application/json; charset=utf-8', ...(header ? { 'stripe-signature': header } : {}) } });
  const send = (event: object, t = token) => {
    const payload = JSON.stringify(event, null, 2);
    return deliver(payload, signed(payload), t);
  };

  before(async () => {
    tenant = await createIntegrationTenant();
    const res = await asOwner(tenant, 'POST', '/api/workspace/proof/stripe-connections',
      { productId: tenant.product.id, name: 'Billing', signingSecret: SECRET });
    assert.equal(res.statusCode, 201, res.body);
    ({ connection, token } = res.json().data);
    assert.match(token, /^svhk_/);
    assert.equal(res.json().data.url, `/api/public/proof/stripe/${token}`);
    assert.ok(!res.body.includes(SECRET));
  });

  it('verifies a header made by the stripe package, and refuses a tampered body, a stale or future timestamp and a rotated secret', async () => {
    const event = stripeEvent('customer.created', { id: 'cus_1' });
    const payload = JSON.stringify(event);
    const ok = await deliver(payload, signed(payload));
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(ok.json().data, { received: true, duplicate: false, processorEventId: event.id, valueEventId: null });

    // Each header is made just before it is sent: a second passing during the loop cannot move a
    // timestamp 301 s off back inside the 300 s tolerance.
    const seconds = () => Math.floor(Date.now() / 1000);
    const failures: Array<[string, () => string | undefined]> = [
      ['tampered', () => signed(payload).replace(/.$/, (c) => (c === '0' ? '1' : '0'))],
      ['tampered body', () => signed(payload.replace('cus_1', 'cus_2'))],
      ['stale', () => signed(payload, SECRET, seconds() - 301)],
      ['future', () => signed(payload, SECRET, seconds() + 301)],
      ['other secret', () => signed(payload, 'whsec_other')],
      ['missing', () => undefined],
      ['garbage', () => 'nonsense'],
    ];
    const now = seconds();
    for (const [name, header] of failures) {
      const res = await deliver(payload, header());
      assert.equal(res.statusCode, 400, `${name}: ${res.body}`);
      assert.equal(errorCode(res), 'VALIDATION_FAILED');
      assert.equal(res.json().error.details[0].path, 'stripe-signature');
    }
    // Several v1 values: any match verifies (the processor sends two while a secret rolls).
    const t = now;
    const good = signed(payload, SECRET, t).split(',').find((p) => p.startsWith('v1='))!;
    const other = `t=${t},v1=${'0'.repeat(64)},${good},v0=abc`;
    assert.equal((await deliver(JSON.stringify(stripeEvent('customer.created', {})), other)).statusCode, 400);
    const again = stripeEvent('customer.created', { id: 'cus_1' });
    const p2 = JSON.stringify(again);
    const h2 = signed(p2, SECRET, t).split(',').find((p) => p.startsWith('v1='))!;
    assert.equal((await deliver(p2, `t=${t},v1=${'0'.repeat(64)},${h2}`)).statusCode, 200);

    // A new secret: the old one no longer verifies.
    const patched = await asOwner(tenant, 'PATCH', `/api/workspace/proof/stripe-connections/${connection.id}`, { signingSecret: 'whsec_rotated_secret' });
    assert.equal(patched.statusCode, 200);
    assert.equal(patched.json().data.hasSigningSecret, true);
    assert.ok(!patched.body.includes('whsec_'));
    const e3 = JSON.stringify(stripeEvent('customer.created', {}));
    assert.equal((await deliver(e3, signed(e3))).statusCode, 400);
    assert.equal((await deliver(e3, signed(e3, 'whsec_rotated_secret'))).statusCode, 200);
    await asOwner(tenant, 'PATCH', `/api/workspace/proof/stripe-connections/${connection.id}`, { signingSecret: SECRET });
  });

  it('answers 400 for a body that is not an event, and 404 for unknown, rotated and disabled URLs', async () => {
    const notEvent = JSON.stringify({ hello: 'world' });
    assert.equal((await deliver(notEvent, signed(notEvent))).statusCode, 400);
    const notJson = 'not json';
    assert.equal((await deliver(notJson, signed(notJson))).statusCode, 400);

    const made = (await asOwner(tenant, 'POST', '/api/workspace/proof/stripe-connections', { productId: tenant.product.id, name: 'Later' })).json().data;
    assert.equal(made.connection.hasSigningSecret, false);
    const noSecret = JSON.stringify(stripeEvent('customer.created', {}));
    const refused = await deliver(noSecret, signed(noSecret), made.token);
    assert.equal(refused.statusCode, 400);
    const rotated = await asOwner(tenant, 'POST', `/api/workspace/proof/stripe-connections/${made.connection.id}/rotate`);
    assert.equal(rotated.statusCode, 200);
    assert.equal((await deliver(noSecret, signed(noSecret), made.token)).statusCode, 404);
    await asOwner(tenant, 'PATCH', `/api/workspace/proof/stripe-connections/${made.connection.id}`, { state: 'disabled' });
    assert.equal((await deliver(noSecret, signed(noSecret), rotated.json().data.token)).statusCode, 404);
    assert.equal((await deliver(noSecret, signed(noSecret), 'svhk_' + 'B'.repeat(43))).statusCode, 404);
  });

  it('maps a paid checkout to a purchase once; a replay maps nothing again', async () => {
    const customer = uniqueId('cus');
    const event = stripeEvent('checkout.session.completed', {
      id: 'cs_1', customer, payment_status: 'paid', amount_total: 4900, currency: 'eur', mode: 'subscription', metadata: { endUserId: 'user-9' },
    });
    const first = await send(event);
    assert.equal(first.statusCode, 200, first.body);
    const { valueEventId } = first.json().data;
    assert.match(valueEventId, /^ve_/);
    const [ve] = await ctx.dataSource.query(`SELECT * FROM proof_value_events WHERE id = $1`, [valueEventId]);
    assert.equal(ve.event_id, `stripe:${event.id}`);
    assert.equal(ve.type, 'purchase');
    assert.equal(ve.person_ref, customer);
    assert.equal(ve.end_user_id, 'user-9');
    assert.equal(ve.origin_type, 'payment');
    assert.equal(ve.origin_id, connection.id);
    assert.deepEqual(ve.properties, { amount: 4900, currency: 'eur', checkoutSessionId: 'cs_1', mode: 'subscription' });
    assert.equal(new Date(ve.occurred_at).getTime(), event.created * 1000);

    const replays = await Promise.all(Array.from({ length: 5 }, () => send(event)));
    for (const r of replays) assert.deepEqual(r.json().data, { received: true, duplicate: true, processorEventId: event.id, valueEventId });
    const [{ n }] = await ctx.dataSource.query(`SELECT count(*)::int AS n FROM proof_value_events WHERE person_ref = $1`, [customer]);
    assert.equal(n, 1);
    const unpaid = await send(stripeEvent('checkout.session.completed', { id: 'cs_2', customer, payment_status: 'unpaid', amount_total: 1 }));
    assert.equal(unpaid.json().data.valueEventId, null);
  });

  it('maps a subscription update to plan_upgrade only when the monthly amount rose', async () => {
    assert.equal(monthlyAmount({ data: [{ price: { unit_amount: 12000, recurring: { interval: 'year', interval_count: 1 } }, quantity: 2 }] }, undefined,
      undefined), 2000);
    assert.equal(monthlyAmount({ data: [{ price: { unit_amount: 100, recurring: { interval: 'week', interval_count: 2 } } }] }, undefined, undefined), 217);
    assert.equal(monthlyAmount(undefined, { amount: 10, interval: 'day' }, 3), 900);
    const customer = uniqueId('cus');
    const item = (id: string, amount: number, quantity = 1) => ({ data: [{ price: { id, unit_amount: amount, currency: 'usd',
      recurring: { interval: 'month', interval_count: 1 } }, quantity }] });
    const up = await send(stripeEvent('customer.subscription.updated', { id: 'sub_1', customer, items: item('price_pro', 5000) },
      { previous_attributes: { items: item('price_basic', 2000) } }));
    const [ve] = await ctx.dataSource.query(`SELECT type, properties FROM proof_value_events WHERE id = $1`, [up.json().data.valueEventId]);
    assert.equal(ve.type, 'plan_upgrade');
    assert.deepEqual(ve.properties, { fromPlan: 'price_basic', toPlan: 'price_pro', fromAmount: 2000, toAmount: 5000, currency: 'usd',
      subscriptionId: 'sub_1' });
    const seats = await send(stripeEvent('customer.subscription.updated', { id: 'sub_1', customer, items: item('price_pro', 5000, 3), quantity: 3 },
      { previous_attributes: { items: item('price_pro', 5000, 1), quantity: 1 } }));
    assert.match(seats.json().data.valueEventId, /^ve_/);
    const down = await send(stripeEvent('customer.subscription.updated', { id: 'sub_1', customer, items: item('price_basic', 2000) },
      { previous_attributes: { items: item('price_pro', 5000) } }));
    assert.equal(down.json().data.valueEventId, null);
    const other = await send(stripeEvent('customer.subscription.updated', { id: 'sub_1', customer, items: item('price_pro', 5000) },
      { previous_attributes: { metadata: {} } }));
    assert.equal(other.json().data.valueEventId, null);
  });

  it('maps paid invoices at the configured milestones, counting distinct invoices once', async () => {
    const patched = await asOwner(tenant, 'PATCH', `/api/workspace/proof/stripe-connections/${connection.id}`, { invoiceMilestones: [2, 3] });
    assert.deepEqual(patched.json().data.invoiceMilestones, [2, 3]);
    const customer = uniqueId('cus');
    const invoice = (id: string, amount = 900) => stripeEvent('invoice.paid', { id, customer, amount_paid: amount, currency: 'usd' });
    assert.equal((await send(invoice('in_1'))).json().data.valueEventId, null);
    assert.equal((await send(invoice('in_1'))).json().data.valueEventId, null, 'the same invoice in a new event does not count twice');
    assert.equal((await send(invoice('in_zero', 0))).json().data.valueEventId, null);
    const second = await send(invoice('in_2'));
    const [ve] = await ctx.dataSource.query(`SELECT type, properties FROM proof_value_events WHERE id = $1`, [second.json().data.valueEventId]);
    assert.deepEqual(ve, { type: 'milestone', properties: { name: 'paid_invoices', count: 2, invoiceId: 'in_2', amountPaid: 900, currency: 'usd' } });
    assert.ok((await send(invoice('in_3'))).json().data.valueEventId);
    assert.equal((await send(invoice('in_4'))).json().data.valueEventId, null);
  });

  it('keeps connections to their organization, never returns the secret and refuses keys', async () => {
    const other = await createTenant();
    const listed = await asOwner(tenant, 'GET', '/api/workspace/proof/stripe-connections');
    assert.equal(listed.statusCode, 200);
    assert.ok(!listed.body.includes('whsec_'));
    assert.ok(listed.json().data.some((c: { id: string }) => c.id === connection.id));
    const theirs = await asOwner(other as IntegrationTenant, 'GET', '/api/workspace/proof/stripe-connections');
    assert.equal(theirs.json().data.length, 0);
    assert.equal(errorCode(await asOwner(other as IntegrationTenant, 'PATCH', `/api/workspace/proof/stripe-connections/${connection.id}`, { name: 'x' })),
      'NOT_FOUND');
    assert.equal(errorCode(await asOwner(other as IntegrationTenant, 'POST', '/api/workspace/proof/stripe-connections',
      { productId: tenant.product.id, name: 'x' })), 'NOT_FOUND');
    const byKey = await call(withKey(tenant.key, { method: 'GET', url: '/api/workspace/proof/stripe-connections' }));
    assert.equal(errorCode(byKey), 'FORBIDDEN');
    const bad = await asOwner(tenant, 'PATCH', `/api/workspace/proof/stripe-connections/${connection.id}`, { invoiceMilestones: [0] });
    assert.equal(bad.statusCode, 400);
    const [row] = await ctx.dataSource.query(`SELECT token_digest FROM proof_stripe_connections WHERE id = $1`, [connection.id]);
    assert.notEqual(row.token_digest, token);
  });

  it('stores the signing secret sealed, never in the clear; the migration seals rows stored before', async () => {
    const stored = async () => (await ctx.dataSource.query(`SELECT signing_secret FROM proof_stripe_connections WHERE id = $1`,
      [connection.id]))[0].signing_secret as string;
    assert.ok(isSealed(await stored()));
    assert.ok(!(await stored()).includes(SECRET));
    assert.equal(openSecret(await stored()), SECRET);
    // A row from before sealing: the migration seals it, and the connector still verifies with it.
    await ctx.dataSource.query(`UPDATE proof_stripe_connections SET signing_secret = $2 WHERE id = $1`, [connection.id, SECRET]);
    const runner = ctx.dataSource.createQueryRunner();
    try {
      await sealPlaintextSigningSecrets(runner);
    } finally {
      await runner.release();
    }
    assert.ok(isSealed(await stored()));
    assert.notEqual(await stored(), SECRET);
    assert.equal((await send(stripeEvent('customer.created', { id: 'cus_sealed' }))).statusCode, 200);
  });
});

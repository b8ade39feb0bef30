import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Stripe from 'stripe';
import { Schemas, createServiceClient, verifyWebhookSignature } from '../../clients/typescript/src';
import { signWebhook } from '../../runtime/webhook-signature';
import { Tenant, createTenant, eventually, listenOnLoopback } from '../support/fixtures';
import { signalBody } from '../support/customer-loop';
import { Receiver } from '../support/receiver';
import { ctx } from '../support/root-hooks';

type IsNever<T> = [T] extends [never] ? true : false;
/** Compiles only when T is a real type: a success body typed `never` would fail the typecheck. */
const typed = <T>(value: T, _proof: IsNever<T> extends false ? true : never): T => value;

describe('typed TypeScript client (clients/typescript) against the live service over HTTP', () => {
  let baseUrl: string;
  let tenant: Tenant;

  before(async () => {
    const app = await ctx.buildApp();
    baseUrl = await listenOnLoopback(app);
    tenant = await createTenant(['service:signals:read', 'service:signals:write', 'service:proof:read']);
  });

  it('captures a signal, reads it back and lists signals with typed answers', async () => {
    const api = createServiceClient({ baseUrl, credential: tenant.key });
    const created = await api.POST('/api/v1/signals', { body: signalBody({ kind: 'bug' }) });
    assert.equal(created.response.status, 201);
    const receipt = typed(created.data!.data, true);
    assert.equal(receipt.replayed, false);

    const read = await api.GET('/api/v1/signals/{id}', { params: { path: { id: receipt.id } } });
    const signal: Schemas['SignalWithFeatures'] = typed(read.data!.data, true);
    assert.equal(signal.category, 'bug');
    assert.deepEqual(signal.features, []);

    const list = await api.GET('/api/v1/signals', { params: { query: { limit: 5, category: 'bug' } } });
    assert.deepEqual(list.data!.data.map((s) => s.id), [receipt.id]);
    assert.equal(list.data!.nextCursor, null);
  });

  it('types errors as the envelope and sends array parameters the service understands', async () => {
    const api = createServiceClient({ baseUrl, credential: tenant.key });
    const missing = await api.GET('/api/v1/signals/{id}', { params: { path: { id: 'sig_missing' } } });
    assert.equal(missing.response.status, 404);
    assert.equal(missing.data, undefined);
    assert.equal(missing.error!.error.code, 'NOT_FOUND');
    const items = await api.GET('/api/v1/proof/items', { params: { query: { status: ['approved', 'in_review'], expand: ['consent'] } } });
    assert.equal(items.response.status, 200, JSON.stringify(items.error));
    assert.deepEqual(items.data!.data, []);
    const unauthenticated = createServiceClient({ baseUrl });
    const refused = await unauthenticated.GET('/api/v1/auth/whoami');
    assert.equal(refused.error!.error.code, 'INVALID_API_KEY');
  });

  it('creates a webhook endpoint as a teammate ({data: {endpoint, secret}}); deliveries verify with the helper and with Stripe\'s library', async function () {
    this.timeout(30_000);
    const receiver = await Receiver.start();
    try {
      const workspace = createServiceClient({ baseUrl, headers: { cookie: tenant.owner.cookie, 'x-csrf-token': tenant.owner.csrfToken } });
      const created = await workspace.POST('/api/workspace/webhooks/endpoints', { body: { url: receiver.url, subscriptions: ['signal.created'] } });
      assert.equal(created.response.status, 201);
      const { endpoint, secret } = typed(created.data!.data, true);
      assert.match(secret, /^whsec_/);
      assert.deepEqual(endpoint.subscriptions, ['signal.created']);

      const api = createServiceClient({ baseUrl, credential: tenant.key });
      const signal = await api.POST('/api/v1/signals', { body: signalBody() });
      const [delivered] = await eventually(async () => receiver.requests.length > 0 && receiver.requests);
      const header = delivered.headers['service-signature'] as string;
      assert.ok(verifyWebhookSignature({ body: delivered.body, header, secrets: secret }));

      // Stripe's scheme is the same: t=<seconds>,v1=HMAC-SHA256(secret, "<t>.<body>"), the whole whsec_ secret as the key.
      const stripe = new Stripe('sk_test_not_used_offline');
      const event = stripe.webhooks.constructEvent(delivered.body, header, secret) as unknown as { type: string; data: { signalId: string } };
      assert.equal(event.type, 'signal.created');
      assert.equal(event.data.signalId, signal.data!.data.id);
      assert.throws(() => stripe.webhooks.constructEvent(`${delivered.body} `, header, secret), /signature/i);
      assert.throws(() => stripe.webhooks.constructEvent(delivered.body, header, 'whsec_wrong'), /signature/i);
      const stale = signWebhook(secret, delivered.body, Math.floor(Date.now() / 1000) - 3600);
      assert.throws(() => stripe.webhooks.constructEvent(delivered.body, stale, secret), /timestamp/i);
    } finally {
      await receiver.close();
    }
  });

  it('ships the same verification helper as runtime/webhook-signature.ts and the rule it builds on', () => {
    const root = path.resolve(__dirname, '../..');
    const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');
    assert.equal(read('clients/typescript/src/timestamped-hmac.ts'), read('runtime/timestamped-hmac.ts'));
    assert.equal(read('clients/typescript/src/webhook-signature.ts'), read('runtime/webhook-signature.ts'));
  });
});

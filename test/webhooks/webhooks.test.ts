import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import dns from 'node:dns';
import os from 'node:os';
import { Worker } from '@temporalio/worker';
import { FastifyInstance } from 'fastify';
import { createActivities } from '../../activities';
import { enqueueEvent, enqueueEvents } from '../../db/outbox';
import { isPublicAddress } from '../../runtime/webhook-target';
import { verifyWebhookSignature } from '../../runtime/webhook-signature';
import { WEBHOOK_MAX_ATTEMPTS, webhookDeliveryWorkflow } from '../../workflows/webhooks/webhook-delivery-workflow';
import { Tenant, asTeammate, call, createTenant, errorCode, eventually, sessionFor, withKey } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { ctx } from '../support/root-hooks';

const ENDPOINTS = '/api/workspace/webhooks/endpoints';

async function emit(tenant: Tenant, type: string, data: Record<string, unknown> = { resourceId: 'r_1' }): Promise<string> {
  return ctx.dataSource.transaction((em) => enqueueEvent(em, {
    organizationId: tenant.organizationId, productId: tenant.product.id, type, data,
  }));
}

async function createEndpoint(tenant: Tenant, body: Record<string, unknown>, app: FastifyInstance = ctx.app) {
  const res = await call(asTeammate(tenant.owner, { method: 'POST', url: ENDPOINTS, payload: body }), app);
  assert.equal(res.statusCode, 201, res.body);
  return res.json().data as { endpoint: { id: string }; secret: string };
}

async function settled(tenant: Tenant, eventId: string, endpointId: string) {
  const [row] = await eventually(async () => {
    const rows: Array<{ id: string }> = await ctx.dataSource.query(
      `SELECT id FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2 AND replay_of_id IS NULL AND status <> 'pending'`,
      [eventId, endpointId]);
    return rows.length > 0 && rows;
  });
  const res = await call(asTeammate(tenant.owner, { method: 'GET', url: `/api/workspace/webhooks/deliveries/${row.id}` }));
  return res.json().data;
}

function independentSignature(secret: string, header: string, body: string): boolean {
  const t = /t=(\d+)/.exec(header)?.[1];
  const v1 = /v1=([0-9a-f]{64})/.exec(header)?.[1];
  return !!t && v1 === createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
}

describe('webhook endpoints: URL safety', () => {
  let tenant: Tenant;
  let strict: FastifyInstance;

  before(async () => {
    tenant = await createTenant();
    strict = await ctx.buildApp({ webhookAllowPrivateTargets: false });
  });

  const refused = [
    'http://hooks.example.com/x', 'ftp://hooks.example.com/x', 'https://user:pw@hooks.example.com/x', 'https://token@hooks.example.com/x',
    'https://localhost/x', 'https://LOCALHOST./x', 'https://api.localhost/x',
    'https://127.0.0.1/x', 'https://127.1/x', 'https://2130706433/x', 'https://0x7f.1/x', 'https://0x7f000001/x',
    'https://0177.0.0.1/x', 'https://017700000001/x', 'https://10.0.0.1/x', 'https://172.16.5.4/x', 'https://192.168.1.1/x',
    'https://169.254.169.254/latest/meta-data', 'https://100.64.0.1/x', 'https://0.0.0.0/x', 'https://255.255.255.255/x',
    'https://224.0.0.1/x', 'https://[::1]/x', 'https://[::]/x', 'https://[::ffff:127.0.0.1]/x', 'https://[::ffff:7f00:1]/x',
    'https://[::ffff:169.254.169.254]/x', 'https://[fe80::1]/x', 'https://[fd00:ec2::254]/x', 'https://[fc00::1]/x',
    'https://[64:ff9b::7f00:1]/x', 'https://[::127.0.0.1]/x', 'https://[::10.0.0.1]/x', 'https://[::169.254.169.254]/x',
    'https://[2002:7f00:1::]/x', 'https://[2001::1]/x', 'not a url', '/relative/path',
  ];
  for (const url of refused) {
    it(`refuses ${url}`, async () => {
      const res = await call(asTeammate(tenant.owner, { method: 'POST', url: ENDPOINTS, payload: { url, subscriptions: ['*'] } }), strict);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(errorCode(res), 'VALIDATION_FAILED');
      assert.equal(res.json().error.details[0].path, 'url');
    });
  }

  it('refuses a host name that resolves to a non-public address', async function () {
    const host = os.hostname();
    const addresses = await dns.promises.lookup(host, { all: true }).catch(() => []);
    if (!addresses.some((a) => !isPublicAddress(a.address))) this.skip();
    const res = await call(asTeammate(tenant.owner, { method: 'POST', url: ENDPOINTS, payload: { url: `https://${host}/x`, subscriptions: ['*'] } }), strict);
    assert.equal(res.statusCode, 400);
    assert.match(res.json().error.message, /resolves to/);
  });

  it('refuses a private URL on update too', async () => {
    const { endpoint } = await createEndpoint(tenant, { url: 'https://93.184.216.34/hook', subscriptions: ['*'] }, strict);
    const res = await call(asTeammate(tenant.owner, { method: 'PATCH', url: `${ENDPOINTS}/${endpoint.id}`, payload: { url: 'https://[::ffff:10.0.0.1]/x' } }),
      strict);
    assert.equal(res.statusCode, 400);
  });

  it('accepts public https URLs, including names that do not resolve from here', async () => {
    await createEndpoint(tenant, { url: 'https://93.184.216.34/hook', subscriptions: ['*'] }, strict);
    await createEndpoint(tenant, { url: 'https://hooks.example.com/in?x=1', subscriptions: ['proof.*'] }, strict);
  });

  it('delivery refuses a non-public address at connect time even if the endpoint was stored', async () => {
    // Stored while private targets were allowed, delivered by a worker that refuses them: once an IP
    // literal (checked before connecting), once a name (checked by the lookup the connection uses).
    const receiver = await Receiver.start();
    const t = await createTenant();
    const port = new URL(receiver.url).port;
    const acts = createActivities({ dataSource: ctx.dataSource, config: { ...ctx.config, webhookAllowPrivateTargets: false } });
    for (const url of [`https://127.0.0.1:${port}/x`, `https://localhost:${port}/x`]) {
      const { endpoint } = await createEndpoint(t, { url, subscriptions: ['*'] });
      const [delivery] = await ctx.dataSource.query(
        `INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_type, payload, workflow_started)
         VALUES ($1, $2, $3, 'evt_direct', 'test.event', '{}', true) RETURNING id`,
        [`whd_${randomBytes(8).toString('hex')}`, t.organizationId, endpoint.id]);
      const result = await acts.sendWebhookAttempt({ deliveryId: delivery.id, attempt: 1, timeoutMs: 1_000 });
      assert.equal(result.kind, 'sent');
      assert.match(result.kind === 'sent' ? String(result.error) : '', /not public/, url);
    }
    assert.equal(receiver.requests.length, 0);
    await receiver.close();
  });
});

describe('webhook endpoints: management', () => {
  let tenant: Tenant;
  before(async () => {
    tenant = await createTenant();
  });

  it('shows the secret once, never in reads or lists', async () => {
    const { endpoint, secret } = await createEndpoint(tenant, { url: 'https://hooks.example.com/a', description: 'CRM',
      subscriptions: ['signal.created', 'proof.*'] });
    assert.match(secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    const read = await call(asTeammate(tenant.owner, { method: 'GET', url: `${ENDPOINTS}/${endpoint.id}` }));
    const list = await call(asTeammate(tenant.owner, { method: 'GET', url: ENDPOINTS }));
    for (const res of [read, list]) {
      assert.equal(res.statusCode, 200);
      assert.ok(!res.body.includes(secret));
    }
    assert.deepEqual(read.json().data.subscriptions, ['signal.created', 'proof.*']);
    const patched = await call(asTeammate(tenant.owner, { method: 'PATCH', url: `${ENDPOINTS}/${endpoint.id}`,
      payload: { enabled: false, description: 'off' } }));
    assert.deepEqual([patched.json().data.enabled, patched.json().data.description], [false, 'off']);
    const empty = await call(asTeammate(tenant.owner, { method: 'PATCH', url: `${ENDPOINTS}/${endpoint.id}`, payload: {} }));
    assert.equal(empty.statusCode, 400);
  });

  it('allows at most 20 endpoints per workspace', async () => {
    const t = await createTenant();
    for (let i = 0; i < 20; i++) await createEndpoint(t, { url: `https://hooks.example.com/${i}`, subscriptions: ['*'] });
    const res = await call(asTeammate(t.owner, { method: 'POST', url: ENDPOINTS, payload: { url: 'https://hooks.example.com/21', subscriptions: ['*'] } }));
    assert.equal(res.statusCode, 409);
    assert.equal(errorCode(res), 'CONFLICT');
    const first = (await call(asTeammate(t.owner, { method: 'GET', url: ENDPOINTS }))).json().data[0];
    await call(asTeammate(t.owner, { method: 'DELETE', url: `${ENDPOINTS}/${first.id}` }));
    await createEndpoint(t, { url: 'https://hooks.example.com/21', subscriptions: ['*'] });
  });

  const bad: Array<[string, Record<string, unknown>]> = [
    ['an unknown property', { url: 'https://hooks.example.com/a', subscriptions: ['*'], secret: 'mine' }],
    ['no subscriptions', { url: 'https://hooks.example.com/a', subscriptions: [] }],
    ['a malformed subscription', { url: 'https://hooks.example.com/a', subscriptions: ['proof.**'] }],
    ['a string for enabled', { url: 'https://hooks.example.com/a', subscriptions: ['*'], enabled: 'true' }],
    ['no url', { subscriptions: ['*'] }],
  ];
  for (const [name, body] of bad) {
    it(`refuses ${name} with 400`, async () => {
      const res = await call(asTeammate(tenant.owner, { method: 'POST', url: ENDPOINTS, payload: body }));
      assert.equal(res.statusCode, 400);
      assert.equal(errorCode(res), 'VALIDATION_FAILED');
    });
  }

  it('is for owners and admins in their own workspace only', async () => {
    const { endpoint } = await createEndpoint(tenant, { url: 'https://hooks.example.com/b', subscriptions: ['*'] });
    const member = await sessionFor(tenant.organizationId, 'member');
    assert.equal((await call(asTeammate(member, { method: 'GET', url: ENDPOINTS }))).statusCode, 403);
    const admin = await sessionFor(tenant.organizationId, 'admin');
    assert.equal((await call(asTeammate(admin, { method: 'GET', url: ENDPOINTS }))).statusCode, 200);
    assert.equal(errorCode(await call(withKey(tenant.key, { method: 'GET', url: ENDPOINTS }))), 'FORBIDDEN');
    const other = await createTenant();
    for (const [method, url] of [['GET', `${ENDPOINTS}/${endpoint.id}`], ['PATCH', `${ENDPOINTS}/${endpoint.id}`], ['DELETE', `${ENDPOINTS}/${endpoint.id}`],
      ['POST', `${ENDPOINTS}/${endpoint.id}/rotate-secret`]] as const) {
      const res = await call(asTeammate(other.owner, { method, url, ...(method === 'PATCH' ? { payload: { enabled: false } } : {}) }));
      assert.equal(res.statusCode, 404, `${method} ${url}`);
    }
  });
});

describe('webhook delivery (real Temporal, real HTTP receiver)', function () {
  this.timeout(30_000);
  let tenant: Tenant;
  let receiver: Receiver;

  beforeEach(async () => {
    tenant = await createTenant();
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    await receiver.close();
  });

  it('delivers a signed envelope with every header, to matching subscriptions only', async () => {
    const { endpoint, secret } = await createEndpoint(tenant, { url: `${receiver.url}/signals`, subscriptions: ['signal.*'] });
    const everything = await Receiver.start();
    await createEndpoint(tenant, { url: everything.url, subscriptions: ['*'] });
    const stranger = await createTenant();
    const strangerReceiver = await Receiver.start();
    await createEndpoint(stranger, { url: strangerReceiver.url, subscriptions: ['*'] });

    await emit(tenant, 'proof.item.approved');
    const eventId = await emit(tenant, 'signal.created', { signalId: 'sig_1' });
    const delivery = await settled(tenant, eventId, endpoint.id);
    assert.equal(delivery.status, 'delivered');
    await everything.waitFor(2);
    assert.equal(receiver.requests.length, 1, 'proof.item.approved is not a signal.* event');
    assert.equal(strangerReceiver.requests.length, 0, 'another workspace hears nothing');

    const [req] = receiver.requests;
    assert.equal(req.path, '/signals');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.match(req.headers['user-agent'] as string, /\/1$/);
    assert.equal(req.headers['service-event-id'], eventId);
    assert.equal(req.headers['service-event-type'], 'signal.created');
    assert.equal(req.headers['service-delivery-id'], delivery.id);
    assert.match(delivery.id, /^whd_/);
    assert.equal(req.headers['service-delivery-attempt'], '1');
    const signature = req.headers['service-signature'] as string;
    assert.match(signature, /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.ok(independentSignature(secret, signature, req.body), 'an independent HMAC-SHA256 agrees');
    assert.ok(verifyWebhookSignature({ body: req.body, header: signature, secrets: secret }));
    const envelope = JSON.parse(req.body);
    assert.deepEqual(Object.keys(envelope).sort(), ['createdAt', 'data', 'id', 'organizationId', 'productId', 'type']);
    assert.deepEqual([envelope.id, envelope.type, envelope.organizationId, envelope.productId],
      [eventId, 'signal.created', tenant.organizationId, tenant.product.id]);
    assert.deepEqual(envelope.data, { signalId: 'sig_1' });
    assert.equal(delivery.body, req.body, 'the log keeps the exact body');
    await everything.close();
    await strangerReceiver.close();
  });

  it('events queued together in one statement are delivered as events queued one by one are', async () => {
    const { endpoint } = await createEndpoint(tenant, { url: receiver.url, subscriptions: ['bulk.*'] });
    const fixed = `evt_bulk_${randomBytes(6).toString('hex')}`;
    const ids = await ctx.dataSource.transaction((em) => enqueueEvents(em, [
      { organizationId: tenant.organizationId, productId: tenant.product.id, type: 'bulk.one', data: { i: 1 } },
      { id: fixed, organizationId: tenant.organizationId, productId: null, type: 'bulk.two', data: { i: 2, nested: { a: [1] } } },
    ]));
    assert.equal(ids[1], fixed);
    assert.match(ids[0], /^evt_/);
    const [one, two] = await Promise.all(ids.map((id) => settled(tenant, id, endpoint.id)));
    assert.deepEqual([one.status, two.status], ['delivered', 'delivered']);
    const bodies = [one, two].map((d) => JSON.parse(d.body));
    assert.deepEqual(bodies.map((b) => [b.id, b.type, b.productId, b.data]),
      [[ids[0], 'bulk.one', tenant.product.id, { i: 1 }], [ids[1], 'bulk.two', null, { i: 2, nested: { a: [1] } }]]);
    // The same id again is a no-op, as with enqueueEvent.
    await ctx.dataSource.transaction((em) => enqueueEvents(em, [
      { id: fixed, organizationId: tenant.organizationId, productId: null, type: 'bulk.two', data: {} }]));
    const [{ count }] = await ctx.dataSource.query(`SELECT count(*)::int AS count FROM outbox_events WHERE id = $1`, [fixed]);
    assert.equal(count, 1);
  });

  it('signs with the new secret at once after rotation; the old secret no longer verifies', async () => {
    const { endpoint, secret: old } = await createEndpoint(tenant, { url: receiver.url, subscriptions: ['*'] });
    const rotated = await call(asTeammate(tenant.owner, { method: 'POST', url: `${ENDPOINTS}/${endpoint.id}/rotate-secret` }));
    const fresh = rotated.json().data.secret as string;
    assert.notEqual(fresh, old);
    await settled(tenant, await emit(tenant, 'thread.replied'), endpoint.id);
    const [req] = receiver.requests;
    const header = req.headers['service-signature'] as string;
    assert.ok(independentSignature(fresh, header, req.body));
    assert.ok(!independentSignature(old, header, req.body));
    assert.equal(verifyWebhookSignature({ body: req.body, header, secrets: old }), false);
  });

  it('retries non-2xx answers with doubling backoff and numbered attempts, logging each', async () => {
    receiver.answer({ status: 500, body: 'boom' }, { status: 503 }, { status: 204 });
    const { endpoint } = await createEndpoint(tenant, { url: receiver.url, subscriptions: ['*'] });
    const eventId = await emit(tenant, 'feature.voted');
    const delivery = await settled(tenant, eventId, endpoint.id);
    assert.equal(delivery.status, 'delivered');
    assert.deepEqual(receiver.requests.map((r) => r.headers['service-delivery-attempt']), ['1', '2', '3']);
    assert.deepEqual(new Set(receiver.requests.map((r) => r.headers['service-event-id'])), new Set([eventId]));
    assert.deepEqual(new Set(receiver.requests.map((r) => r.body)).size, 1, 'every attempt sends the same body');
    const [a, b, c] = receiver.requests.map((r) => r.at);
    assert.ok(b - a >= 100, `first backoff ${b - a} ms >= WEBHOOK_RETRY_INITIAL_MS`);
    assert.ok(c - b >= 200, `second backoff ${c - b} ms doubles`);
    assert.deepEqual(delivery.attempts.map((x: { statusCode: number }) => x.statusCode), [500, 503, 204]);
    assert.equal(delivery.attempts[0].responseExcerpt, 'boom');
    assert.equal(delivery.attemptCount, 3);
  });

  it('stores a binary answer\'s excerpt and counts a 2xx with any body as delivered', async () => {
    receiver.answer({ status: 200, body: 'ok\u0000\u0001binary' });
    const { endpoint } = await createEndpoint(tenant, { url: receiver.url, subscriptions: ['*'] });
    const delivery = await settled(tenant, await emit(tenant, 'signal.created'), endpoint.id);
    assert.equal(delivery.status, 'delivered');
    assert.equal(receiver.requests.length, 1, 'sent once');
    assert.equal(delivery.attempts[0].responseExcerpt, 'ok\uFFFD\u0001binary');
  });

  it('never follows a redirect: it is a failed attempt', async () => {
    receiver.answer({ status: 302, headers: { location: '/elsewhere' } }, { status: 200 });
    const { endpoint } = await createEndpoint(tenant, { url: `${receiver.url}/hook`, subscriptions: ['*'] });
    const delivery = await settled(tenant, await emit(tenant, 'release.published'), endpoint.id);
    assert.deepEqual(receiver.requests.map((r) => r.path), ['/hook', '/hook']);
    assert.equal(delivery.attempts[0].statusCode, 302);
    assert.match(delivery.attempts[0].error, /redirect/);
    assert.equal(delivery.status, 'delivered');
  });

  it('abandons an attempt that takes longer than WEBHOOK_TIMEOUT_MS and retries', async () => {
    receiver.answer({ hangMs: 2_000 }, { status: 200 });
    const { endpoint } = await createEndpoint(tenant, { url: receiver.url, subscriptions: ['*'] });
    const delivery = await settled(tenant, await emit(tenant, 'thread.sla_escalated'), endpoint.id);
    assert.match(delivery.attempts[0].error, /timeout/);
    assert.equal(delivery.attempts[0].statusCode, null);
    assert.ok(delivery.attempts[0].durationMs >= 900 && delivery.attempts[0].durationMs < 1_900, `${delivery.attempts[0].durationMs} ms`);
    assert.equal(delivery.status, 'delivered');
  });

  it('fails a delivery to a disabled endpoint without sending', async () => {
    const { endpoint } = await createEndpoint(tenant, { url: receiver.url, subscriptions: ['*'], enabled: false });
    const delivery = await settled(tenant, await emit(tenant, 'signal.created'), endpoint.id);
    assert.equal(delivery.status, 'failed');
    assert.equal(delivery.attempts.length, 0);
    assert.match(delivery.lastError, /disabled/);
    assert.equal(receiver.requests.length, 0);
  });

  it('after the 8th failed attempt the delivery stays failed in the log', async () => {
    receiver.answer({ status: 500 });
    const { endpoint } = await createEndpoint(tenant, { url: receiver.url, subscriptions: ['*'] });
    const delivery = await settled(tenant, await emit(tenant, 'signal.created'), endpoint.id);
    assert.equal(delivery.status, 'failed');
    assert.equal(WEBHOOK_MAX_ATTEMPTS, 8);
    assert.equal(receiver.requests.length, 8);
    assert.equal(delivery.attempts.length, 8);
    assert.equal(delivery.attemptCount, 8);
    const listed = await call(asTeammate(tenant.owner, { method: 'GET', url: `/api/workspace/webhooks/deliveries?status=failed&endpointId=${endpoint.id}` }));
    assert.deepEqual(listed.json().data.map((d: { id: string }) => d.id), [delivery.id]);
  });

  it('replay sends the same event id and byte-identical body as a new delivery', async () => {
    const { endpoint } = await createEndpoint(tenant, { url: receiver.url, subscriptions: ['*'] });
    const original = await settled(tenant, await emit(tenant, 'signal.created', { n: 1, text: 'ünïcode ✓' }), endpoint.id);
    const replay = await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/workspace/webhooks/deliveries/${original.id}/replay` }));
    assert.equal(replay.statusCode, 201);
    assert.notEqual(replay.json().data.id, original.id);
    assert.equal(replay.json().data.replayOfId, original.id);
    const [first, second] = await receiver.waitFor(2);
    assert.equal(second.headers['service-event-id'], first.headers['service-event-id']);
    assert.equal(second.body, first.body);
    assert.equal(second.headers['service-delivery-id'], replay.json().data.id);
    const other = await createTenant();
    assert.equal((await call(asTeammate(other.owner, { method: 'POST', url: `/api/workspace/webhooks/deliveries/${original.id}/replay` }))).statusCode, 404);
    assert.equal((await call(asTeammate(other.owner, { method: 'GET', url: `/api/workspace/webhooks/deliveries/${original.id}` }))).statusCode, 404);
  });

  it('a publisher sweep that runs again sends nothing twice', async () => {
    const { endpoint } = await createEndpoint(tenant, { url: receiver.url, subscriptions: ['*'] });
    const eventId = await emit(tenant, 'signal.created');
    await settled(tenant, eventId, endpoint.id);
    await ctx.dataSource.query('UPDATE outbox_events SET processed_at = NULL WHERE id = $1', [eventId]);
    const swept = await eventually(async () => (await ctx.dataSource.query('SELECT processed_at FROM outbox_events WHERE id = $1', [eventId]))[0].processed_at,
      5_000);
    assert.ok(swept, 'the relay swept the row again');
    // The sweep marks the row in the transaction that would have added deliveries: the count is final now.
    const rows = await ctx.dataSource.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = $1', [eventId]);
    assert.equal(rows[0].n, 1);
    assert.equal(receiver.requests.length, 1);
  });

  it('a worker restarted while a delivery waits to retry loses nothing', async function () {
    this.timeout(60_000);
    receiver.answer({ status: 500 }, { status: 200 });
    const { endpoint } = await createEndpoint(tenant, { url: receiver.url, subscriptions: ['*'] });
    const taskQueue = `restart-${randomBytes(4).toString('hex')}`;
    const deliveryId = `whd_${randomBytes(8).toString('hex')}`;
    await ctx.dataSource.query(
      `INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_type, payload, workflow_started)
       VALUES ($1, $2, $3, 'evt_restart', 'signal.created', '{"id":"evt_restart"}', true)`,
      [deliveryId, tenant.organizationId, endpoint.id]);
    // Without a workflow cache the first worker takes no sticky queue, so the resumed timer is not held
    // for the sticky timeout (10 s) before the second worker may take it.
    const makeWorker = (maxCachedWorkflows?: number) => Worker.create({
      connection: ctx.nativeConnection, taskQueue, workflowBundle: ctx.workflowBundle, maxCachedWorkflows,
      activities: createActivities({ dataSource: ctx.dataSource, config: ctx.config }),
    });
    const first = await makeWorker(0);
    const firstRun = first.run();
    const handle = await ctx.temporal.workflow.start(webhookDeliveryWorkflow, {
      workflowId: `webhook-delivery/${deliveryId}`, taskQueue,
      args: [{ deliveryId, timeoutMs: 1_000, retryInitialMs: 1_500, retryMaxMs: 1_500, maxAttempts: 8 }],
    });
    await receiver.waitFor(1);
    first.shutdown();
    await firstRun;
    const second = await makeWorker();
    const result = await second.runUntil(handle.result());
    assert.equal(result, 'delivered');
    assert.deepEqual(receiver.requests.map((r) => r.headers['service-delivery-attempt']), ['1', '2']);
  });
});

describe('receiver verification helper', () => {
  const secret = 'whsec_test';
  const body = '{"id":"evt_1"}';
  const now = new Date('2026-01-01T00:00:00Z');
  const t = Math.floor(now.getTime() / 1000);
  const sign = (ts: number, s = secret) => createHmac('sha256', s).update(`${ts}.${body}`).digest('hex');

  it('accepts a valid signature within 5 minutes either way, and refuses beyond', () => {
    for (const skew of [0, 299, -299]) {
      assert.ok(verifyWebhookSignature({ body, header: `t=${t + skew},v1=${sign(t + skew)}`, secrets: secret, now }), `skew ${skew}`);
    }
    for (const skew of [301, -301]) {
      assert.equal(verifyWebhookSignature({ body, header: `t=${t + skew},v1=${sign(t + skew)}`, secrets: secret, now }), false, `skew ${skew}`);
    }
  });

  it('accepts any of several v1 values and any of several secrets', () => {
    const header = `t=${t},v1=${sign(t, 'other')},v1=${sign(t)}`;
    assert.ok(verifyWebhookSignature({ body, header, secrets: secret, now }));
    assert.ok(verifyWebhookSignature({ body, header: `t=${t},v1=${sign(t, 'old')}`, secrets: [secret, 'old'], now }));
  });

  for (const header of [undefined, '', 't=', `t=${t}`, `v1=${'a'.repeat(64)}`, `t=${t},v1=abc`, `t=${t},v1=${'A'.repeat(64)}`, `t=x,v1=${'a'.repeat(64)}`,
    'garbage,,,==', 'x'.repeat(10_000)]) {
    it(`refuses ${JSON.stringify(header?.slice(0, 30))} cleanly`, () => {
      assert.equal(verifyWebhookSignature({ body, header, secrets: secret, now }), false);
    });
  }

  it('refuses a changed body or the wrong secret', () => {
    assert.equal(verifyWebhookSignature({ body: `${body} `, header: `t=${t},v1=${sign(t)}`, secrets: secret, now }), false);
    assert.equal(verifyWebhookSignature({ body, header: `t=${t},v1=${sign(t)}`, secrets: 'whsec_wrong', now }), false);
  });
});

import assert from 'node:assert/strict';
import { verifyWebhookSignature } from '../../runtime/webhook-signature';
import { Tenant, asTeammate, call, createTenant, errorCode, eventually, sessionFor } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { ctx } from '../support/root-hooks';

const ENDPOINTS = '/api/workspace/webhooks/endpoints';

async function createEndpoint(tenant: Tenant, url: string, subscriptions: string[]) {
  const res = await call(asTeammate(tenant.owner, { method: 'POST', url: ENDPOINTS, payload: { url, subscriptions } }));
  assert.equal(res.statusCode, 201, res.body);
  return res.json().data as { endpoint: { id: string }; secret: string };
}

describe('webhook endpoints: a test event (console, issue 28)', function () {
  this.timeout(60_000);
  let tenant: Tenant;
  let receiver: Receiver;

  before(async () => {
    tenant = await createTenant();
    receiver = await Receiver.start();
  });
  after(async () => receiver?.close());

  it('sends one signed webhook.test to that endpoint only, whatever it subscribes to, logged with its attempt', async () => {
    const { endpoint, secret } = await createEndpoint(tenant, `${receiver.url}/tested`, ['proof.item.approved']);
    const other = await createEndpoint(tenant, `${receiver.url}/other`, ['*']);
    const res = await call(asTeammate(tenant.owner, { method: 'POST', url: `${ENDPOINTS}/${endpoint.id}/test` }));
    assert.equal(res.statusCode, 201, res.body);
    const queued = res.json().data;
    assert.deepEqual([queued.endpointId, queued.eventType, queued.status, queued.replayOfId], [endpoint.id, 'webhook.test', 'pending', null]);
    assert.match(queued.id, /^whd_/);
    assert.match(queued.eventId, /^evt_/);

    const req = await eventually(async () => receiver.requests.find((r) => r.headers['service-delivery-id'] === queued.id), 30_000);
    assert.equal(req.path, '/tested');
    assert.equal(req.headers['service-event-type'], 'webhook.test');
    assert.equal(req.headers['service-event-id'], queued.eventId);
    assert.equal(req.headers['service-delivery-attempt'], '1');
    assert.ok(verifyWebhookSignature({ body: req.body, header: req.headers['service-signature'] as string, secrets: secret }),
      'signed with the endpoint\'s secret');
    const envelope = JSON.parse(req.body);
    assert.deepEqual([envelope.id, envelope.type, envelope.organizationId, envelope.productId, envelope.data.endpointId],
      [queued.eventId, 'webhook.test', tenant.organizationId, null, endpoint.id]);

    const logged = await eventually(async () => {
      const d = (await call(asTeammate(tenant.owner, { method: 'GET', url: `/api/workspace/webhooks/deliveries/${queued.id}` }))).json().data;
      return d.status === 'delivered' && d;
    });
    assert.equal(logged.body, req.body);
    assert.deepEqual(logged.attempts.map((a: { attempt: number; statusCode: number }) => [a.attempt, a.statusCode]), [[1, 200]]);
    assert.equal(receiver.requests.filter((r) => r.path === '/other').length, 0, 'no other endpoint hears it');
    const [{ n }] = await ctx.dataSource.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1', [other.endpoint.id]);
    assert.equal(n, 0);
  });

  it('answers 404 for another workspace\'s endpoint and 403 to a member', async () => {
    const { endpoint } = await createEndpoint(tenant, `${receiver.url}/private`, ['*']);
    const stranger = await createTenant();
    const foreign = await call(asTeammate(stranger.owner, { method: 'POST', url: `${ENDPOINTS}/${endpoint.id}/test` }));
    assert.equal(foreign.statusCode, 404, foreign.body);
    assert.equal(errorCode(foreign), 'NOT_FOUND');
    const member = await sessionFor(tenant.organizationId, 'member');
    const refused = await call(asTeammate(member, { method: 'POST', url: `${ENDPOINTS}/${endpoint.id}/test` }));
    assert.equal(refused.statusCode, 403, refused.body);
    const [{ n }] = await ctx.dataSource.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1', [endpoint.id]);
    assert.equal(n, 0, 'nothing was queued');
  });
});

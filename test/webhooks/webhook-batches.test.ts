import assert from 'node:assert/strict';
import { WorkflowNotFoundError } from '@temporalio/client';
import { sendFirstAttempts } from '../../activities/webhooks/webhook-activities';
import { enqueueEvent } from '../../db/outbox';
import { newId } from '../../db/rules/ids';
import { createEndpoint } from '../../db/webhooks/webhook-endpoints';
import { getDelivery } from '../../db/webhooks/webhook-deliveries';
import { INTERRUPTED, claimFirstAttempts } from '../../db/webhooks/webhook-attempts';
import { verifyWebhookSignature } from '../../runtime/webhook-signature';
import { ORGANIZATION_ID, PRODUCT_ID } from '../../runtime/workflow-memo';
import { webhookDeliveryWorkflow } from '../../workflows/webhooks/webhook-delivery-workflow';
import { Tenant, createTenant, eventually } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { ctx } from '../support/root-hooks';
import { webhookBatchWorkflowId, webhookDeliveryWorkflowId } from '../../workflows/workflow-ids';

const deps = () => ({ dataSource: ctx.dataSource, config: { webhookAllowPrivateTargets: true } });

/** A delivery the suite's relay leaves alone (marked started), so that the test drives its batch itself. */
async function delivery(tenant: Tenant, endpointId: string): Promise<string> {
  const id = newId('whd');
  const eventId = newId('evt');
  await ctx.dataSource.query(
    `INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, product_id, event_id, event_type, payload, workflow_started)
     VALUES ($1, $2, $3, $4, $5, 'test.event', $6, true)`,
    [id, tenant.organizationId, endpointId, tenant.product.id, eventId, JSON.stringify({ id: eventId, type: 'test.event' })],
  );
  return id;
}

const sentTo = (receiver: Receiver, deliveryId: string) =>
  receiver.requests.filter((r) => r.headers['service-delivery-id'] === deliveryId).map((r) => r.headers['service-delivery-attempt']);

describe('webhook batches: first attempts in one activity', function () {
  this.timeout(30_000);
  let tenant: Tenant;
  let ok: Receiver;
  let failing: Receiver;

  beforeEach(async () => {
    tenant = await createTenant();
    ok = await Receiver.start();
    failing = (await Receiver.start()).answer({ status: 500, body: 'down' });
  });
  afterEach(async () => {
    await ok.close();
    await failing.close();
  });

  it('sends each first attempt signed with every header, logs it, and hands only failures on', async () => {
    const good = await createEndpoint(ctx.dataSource, tenant.organizationId, { url: `${ok.url}/in`, subscriptions: ['*'] });
    const bad = await createEndpoint(ctx.dataSource, tenant.organizationId, { url: failing.url, subscriptions: ['*'] });
    const off = await createEndpoint(ctx.dataSource, tenant.organizationId, { url: ok.url, subscriptions: ['*'], enabled: false });
    const delivered = await Promise.all(Array.from({ length: 5 }, () => delivery(tenant, good.endpoint.id)));
    const refused = await delivery(tenant, bad.endpoint.id);
    const disabled = await delivery(tenant, off.endpoint.id);
    const ids = [...delivered, refused, disabled];
    const batchId = `webhook-batch/${newId('whb')}`;

    const outcomes = await sendFirstAttempts(deps(), { batchId, deliveryIds: ids, timeoutMs: 1_000, concurrency: 3 });
    assert.deepEqual(outcomes.map((o) => o.deliveryId), ids, 'one outcome per delivery, in order');
    assert.deepEqual(outcomes.filter((o) => o.next === 'retry'), [{ deliveryId: refused, next: 'retry', attemptsMade: 1, waitFirst: true }]);

    assert.equal(ok.requests.length, 5, 'the disabled endpoint is not sent to');
    for (const id of delivered) {
      const [req] = ok.requests.filter((r) => r.headers['service-delivery-id'] === id);
      const log = await getDelivery(ctx.dataSource, tenant.organizationId, id);
      assert.equal(req.path, '/in');
      assert.equal(req.headers['content-type'], 'application/json');
      assert.equal(req.headers['user-agent'], 'sv-webhooks/1');
      assert.equal(req.headers['service-event-id'], JSON.parse(log.body).id);
      assert.equal(req.headers['service-event-type'], 'test.event');
      assert.equal(req.headers['service-delivery-attempt'], '1');
      assert.ok(verifyWebhookSignature({ body: req.body, header: req.headers['service-signature'] as string, secrets: good.secret }));
      assert.equal(req.body, log.body);
      assert.equal(log.status, 'delivered');
      assert.deepEqual(log.attempts.map((a) => [a.attempt, a.statusCode, a.error]), [[1, 200, null]]);
    }
    const failed = await getDelivery(ctx.dataSource, tenant.organizationId, refused);
    assert.equal(failed.status, 'pending', 'the retry workflow decides from here');
    assert.deepEqual(failed.attempts.map((a) => [a.attempt, a.statusCode, a.responseExcerpt]), [[1, 500, 'down']]);
    const off1 = await getDelivery(ctx.dataSource, tenant.organizationId, disabled);
    assert.deepEqual([off1.status, off1.attempts.length, off1.lastError], ['failed', 0, 'endpoint disabled: not sent']);

    // The same batch's activity again (its worker died after it finished): nothing is sent again.
    const again = await sendFirstAttempts(deps(), { batchId, deliveryIds: ids, timeoutMs: 1_000, concurrency: 3 });
    assert.deepEqual(again, outcomes);
    // Another batch holding the same deliveries (a relay sweep after a lost claim): nothing at all.
    const sweep = await sendFirstAttempts(deps(), { batchId: `webhook-batch/${newId('whb')}`, deliveryIds: ids, timeoutMs: 1_000, concurrency: 3 });
    assert.deepEqual(sweep.map((o) => o.next), ids.map(() => 'done'));
    assert.equal(ok.requests.length, 5);
    assert.deepEqual(sentTo(failing, refused), ['1']);
  });

  it('answers recorded together are each logged once, with the right outcome, and the retry decides from there', async () => {
    const good = await createEndpoint(ctx.dataSource, tenant.organizationId, { url: ok.url, subscriptions: ['*'] });
    const bad = await createEndpoint(ctx.dataSource, tenant.organizationId, { url: failing.url, subscriptions: ['*'] });
    const delivered = await Promise.all(Array.from({ length: 20 }, () => delivery(tenant, good.endpoint.id)));
    const refused = await Promise.all(Array.from({ length: 4 }, () => delivery(tenant, bad.endpoint.id)));
    const ids = [...delivered, ...refused];
    const batchId = `webhook-batch/${newId('whb')}`;

    const outcomes = await sendFirstAttempts(deps(), { batchId, deliveryIds: ids, timeoutMs: 1_000, concurrency: 8 });
    assert.deepEqual(outcomes.map((o) => o.next), [...delivered.map(() => 'done'), ...refused.map(() => 'retry')]);
    for (const id of delivered) {
      const log = await getDelivery(ctx.dataSource, tenant.organizationId, id);
      assert.deepEqual([log.status, log.attemptCount, log.lastError], ['delivered', 1, null]);
      assert.deepEqual(log.attempts.map((a) => [a.attempt, a.statusCode, a.error]), [[1, 200, null]]);
      assert.deepEqual(sentTo(ok, id), ['1']);
    }
    for (const id of refused) {
      const log = await getDelivery(ctx.dataSource, tenant.organizationId, id);
      assert.deepEqual([log.status, log.attemptCount, log.lastError, log.completedAt], ['pending', 1, 'HTTP 500', null]);
      assert.deepEqual(log.attempts.map((a) => [a.attempt, a.statusCode, a.error, a.responseExcerpt]), [[1, 500, 'HTTP 500', 'down']]);
    }
  });

  it('a first attempt cut short by a dying worker goes on in its retry workflow under the next number', async () => {
    const good = await createEndpoint(ctx.dataSource, tenant.organizationId, { url: ok.url, subscriptions: ['*'] });
    const id = await delivery(tenant, good.endpoint.id);
    const batchId = `webhook-batch/${newId('whb')}`;
    // The batch claimed attempt 1 and its worker died before the answer was recorded.
    const claims = await claimFirstAttempts(ctx.dataSource, [id], batchId);
    assert.equal(claims.get(id)?.kind, 'send');
    const [outcome] = await sendFirstAttempts(deps(), { batchId, deliveryIds: [id], timeoutMs: 1_000, concurrency: 3 });
    assert.deepEqual(outcome, { deliveryId: id, next: 'retry', attemptsMade: 1, waitFirst: false });
    assert.equal(ok.requests.length, 0, 'the retried batch does not send it again itself');
    const handle = await ctx.temporal.workflow.start(webhookDeliveryWorkflow, {
      workflowId: webhookDeliveryWorkflowId(id), taskQueue: ctx.config.taskQueue,
      args: [{ deliveryId: id, timeoutMs: 1_000, retryInitialMs: 100, retryMaxMs: 400, maxAttempts: 8, attemptsMade: 1, waitFirst: false }],
    });
    assert.equal(await handle.result(), 'delivered');
    assert.deepEqual(sentTo(ok, id), ['2'], 'an attempt number is never sent twice');
    const log = await getDelivery(ctx.dataSource, tenant.organizationId, id);
    assert.deepEqual(log.attempts.map((a) => [a.attempt, a.statusCode, a.error]), [[1, null, INTERRUPTED], [2, 200, null]]);
  });

  it('through the relay: a burst is delivered once each by batch workflows, with no delivery workflow for a success', async () => {
    const good = await createEndpoint(ctx.dataSource, tenant.organizationId, { url: ok.url, subscriptions: ['burst.*'] });
    const events = await ctx.dataSource.transaction(async (em) => {
      const out: string[] = [];
      for (let i = 0; i < 40; i++) out.push(await enqueueEvent(em, { organizationId: tenant.organizationId, productId: tenant.product.id, type: 'burst.event',
        data: { i } }));
      return out;
    });
    await ok.waitFor(40);
    const rows: Array<{ id: string; first_attempt_batch: string }> = await eventually(async () => {
      const found = await ctx.dataSource.query(
        `SELECT id, first_attempt_batch FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'delivered'`, [good.endpoint.id]);
      return found.length === 40 && found;
    });
    assert.deepEqual(new Set(ok.requests.map((r) => r.headers['service-event-id'])), new Set(events));
    assert.deepEqual(ok.requests.map((r) => r.headers['service-delivery-attempt']), ok.requests.map(() => '1'));
    const batches = new Set(rows.map((r) => r.first_attempt_batch));
    for (const batch of batches) {
      assert.match(batch, /^webhook-batch\/whb_/);
      const result = await ctx.temporal.workflow.getHandle(batch).result();
      assert.equal(result.retrying, 0);
    }
    await assert.rejects(ctx.temporal.workflow.getHandle(webhookDeliveryWorkflowId(rows[0].id)).describe(), WorkflowNotFoundError);
    assert.equal(webhookBatchWorkflowId('whb_x'), 'webhook-batch/whb_x');
  });

  it('through the relay: a failed first attempt continues in a retry workflow carrying the tenant search attributes', async () => {
    failing.answer({ status: 503 }, { status: 204 });
    const bad = await createEndpoint(ctx.dataSource, tenant.organizationId, { url: failing.url, subscriptions: ['*'] });
    const eventId = await ctx.dataSource.transaction((em) => enqueueEvent(em, {
      organizationId: tenant.organizationId, productId: tenant.product.id, type: 'retry.event', data: {},
    }));
    const [row]: Array<{ id: string }> = await eventually(async () => {
      const found = await ctx.dataSource.query(
        `SELECT id FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2 AND status = 'delivered'`, [eventId, bad.endpoint.id]);
      return found.length > 0 && found;
    });
    assert.deepEqual(sentTo(failing, row.id), ['1', '2']);
    const retry = await ctx.temporal.workflow.getHandle(webhookDeliveryWorkflowId(row.id)).describe();
    assert.equal(retry.typedSearchAttributes.get(ORGANIZATION_ID), tenant.organizationId);
    assert.equal(retry.typedSearchAttributes.get(PRODUCT_ID), tenant.product.id);
    assert.equal(retry.memo?.endpointId, bad.endpoint.id);
  });
});

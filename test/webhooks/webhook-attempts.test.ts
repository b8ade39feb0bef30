import assert from 'node:assert/strict';
import { createWebhookActivities } from '../../activities/webhooks/webhook-activities';
import { newId } from '../../db/rules/ids';
import { createEndpoint } from '../../db/webhooks/webhook-endpoints';
import { getDelivery } from '../../db/webhooks/webhook-deliveries';
import { INTERRUPTED } from '../../db/webhooks/webhook-attempts';
import { createTenant } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { ctx } from '../support/root-hooks';

describe('webhook attempts under a worker that dies mid-attempt', () => {
  let receiver: Receiver;

  before(async () => {
    receiver = await Receiver.start();
  });

  after(async () => {
    await receiver.close();
  });

  it('the next worker\'s try sends a new attempt number and logs the interrupted one', async () => {
    const tenant = await createTenant();
    const { endpoint } = await createEndpoint(ctx.dataSource, tenant.organizationId, { url: `${receiver.url}/hook`, subscriptions: ['*'] });
    const deliveryId = newId('whd');
    // Marked started, so the suite's relay leaves it to this test.
    await ctx.dataSource.query(
      `INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, product_id, event_id, event_type, payload, workflow_started)
       VALUES ($1, $2, $3, NULL, $4, 'test.event', '{"id":"evt_x"}', true)`,
      [deliveryId, tenant.organizationId, endpoint.id, newId('evt')],
    );
    const activities = createWebhookActivities({ dataSource: ctx.dataSource, config: { webhookAllowPrivateTargets: true } });
    const input = { deliveryId, attempt: 1, timeoutMs: 2_000 };
    // The first try's answer never reaches the workflow: its worker died after the POST.
    await activities.sendWebhookAttempt(input);
    // Temporal retries the activity with the same input on another worker.
    const second = await activities.sendWebhookAttempt(input);
    assert.ok(second.kind === 'sent');
    assert.equal(await activities.recordWebhookAttempt({ deliveryId, attempt: second.attempt!, result: second }), true);
    const seen = receiver.requests.filter((r) => r.headers['service-delivery-id'] === deliveryId).map((r) => r.headers['service-delivery-attempt']);
    assert.deepEqual(seen, ['1', '2'], 'an attempt number is never sent twice');
    const log = await getDelivery(ctx.dataSource, tenant.organizationId, deliveryId);
    assert.equal(log.status, 'delivered');
    assert.equal(log.attemptCount, 2);
    assert.deepEqual(log.attempts.map((a) => [a.attempt, a.statusCode, a.error]), [[1, null, INTERRUPTED], [2, 200, null]]);
  });
});

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { verifyWebhookSignature } from '../../clients/typescript/src';
import { openDatabase } from '../../db/data-source';
import { enqueueEvent } from '../../db/outbox';
import { createOrganization, createProduct } from '../../db/platform/tenancy';
import { INTERRUPTED } from '../../db/webhooks/webhook-attempts';
import { createEndpoint } from '../../db/webhooks/webhook-endpoints';
import { eventually } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { ROOT, TSX_NODE, startRoleProcess } from '../support/role-processes';
import { ctx } from '../support/root-hooks';
import { Cleanup, startScratchDatabase } from '../support/servers';

const GRACE_MS = 1_000;
/** Closing the Temporal connections and the database pool after the grace, on a loaded machine. */
const EXIT_MARGIN_MS = 5_000;

/**
 * A worker stopped by SIGTERM (a rolling restart, a scale-down) while a receiver holds a webhook
 * attempt open longer than SV_WORKER_SHUTDOWN_GRACE_MS: the attempt is abandoned when the grace ends,
 * the worker exits, and Temporal hands the delivery to the other worker, which sends it again.
 */
describe('worker shutdown: an attempt that outlives the grace goes back to Temporal and another worker delivers it', function () {
  this.timeout(240_000);
  const cleanup: Cleanup = [];
  after(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  });

  it('SIGTERM on the worker holding a delivery: it exits within the grace, the receiver sees the request aborted, the other worker delivers the same delivery',
    async () => {
      const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sv-handback-'));
      cleanup.push(async () => fs.rmSync(scratch, { recursive: true, force: true }));
      const bundlePath = path.join(scratch, 'workflow-bundle.js');
      fs.writeFileSync(bundlePath, ctx.workflowBundle.code);
      const databaseUrl = await startScratchDatabase(cleanup, 'sv_handback');
      const env = {
        DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: ctx.temporalAddress, SV_SECRET_KEYS: process.env.SV_SECRET_KEYS ?? '',
        SV_TASK_QUEUE: `handback-${randomBytes(4).toString('hex')}`, SV_WORKFLOW_BUNDLE: bundlePath, SV_WORKER_METRICS_PORT: '0',
        SV_WORKER_SHUTDOWN_GRACE_MS: String(GRACE_MS), WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SV_RELAY_IDLE_MS: '100',
        // The held request must be ended by the shutdown, not by the attempt's own timeout.
        WEBHOOK_TIMEOUT_MS: '120000', LOG_LEVEL: 'error', TEMPORAL_LOG_LEVEL: 'ERROR',
      };
      const startWorker = (name: string) => {
        const dataDir = path.join(scratch, name);
        fs.mkdirSync(dataDir);
        return startRoleProcess(cleanup, [...TSX_NODE, path.join(ROOT, 'worker', 'main.ts')], { ...env, SV_DATA_DIR: dataDir }, /worker polling task queue/);
      };
      const first = await startWorker('worker-1');

      const ds = await openDatabase(databaseUrl, 2);
      cleanup.push(() => ds.destroy());
      const org = await createOrganization(ds, { name: 'Handback', sponsored: true });
      const product = await createProduct(ds, { organizationId: org.id, name: 'Handback app' });
      const receiver = await Receiver.start();
      cleanup.push(() => receiver.close());
      // The first request is held (far longer than the grace); every later one is answered 200.
      receiver.answer({ hangMs: 120_000 }, { status: 200 });
      const endpoint = await createEndpoint(ds, org.id, { url: `${receiver.url}/hook`, subscriptions: ['signal.created'] });
      await ds.transaction((em) => enqueueEvent(em, { organizationId: org.id, productId: product.id, type: 'signal.created',
        data: { signalId: 'sig_handback' } }));
      const held = await eventually(async () => receiver.requests[0], 60_000);

      const second = await startWorker('worker-2');
      const stoppedAt = Date.now();
      const code = await first.stop('SIGTERM', 60_000);
      const exitMs = Date.now() - stoppedAt;
      assert.equal(code, 0, `${first.output()}\nreceiver: ${receiver.requests.length} requests, aborted after ${receiver.aborted.map((a) => a.abortedAt - stoppedAt).join(', ')} ms`);
      assert.match(first.output(), /SIGTERM received, stopping/);

      assert.equal(receiver.aborted.length, 1, 'the held request was abandoned by the stopping worker');
      const abortedMs = receiver.aborted[0].abortedAt - stoppedAt;
      const again = await eventually(async () => receiver.requests[1], 60_000);
      const redeliveryMs = again.at - stoppedAt;
      console.log(`      worker shutdown: held request aborted ${abortedMs} ms after SIGTERM (grace ${GRACE_MS} ms), worker exited after ${exitMs} ms, redelivered by the other worker ${redeliveryMs} ms after SIGTERM`);
      assert.ok(abortedMs >= GRACE_MS - 100, `not abandoned before the grace ended: ${abortedMs} ms`);
      assert.ok(exitMs < GRACE_MS + EXIT_MARGIN_MS, `exited within the grace and a margin: ${exitMs} ms`);

      // The same delivery, event and body, signed with the endpoint's secret, under the next attempt number.
      for (const header of ['service-delivery-id', 'service-event-id', 'service-event-type']) {
        assert.equal(again.headers[header], held.headers[header], header);
      }
      assert.equal(held.headers['service-delivery-attempt'], '1');
      assert.equal(again.headers['service-delivery-attempt'], '2');
      assert.equal(again.body, held.body);
      assert.ok(verifyWebhookSignature({ body: again.body, header: again.headers['service-signature'] as string, secrets: endpoint.secret }));

      // The delivery log: attempt 1 interrupted (no answer), attempt 2 answered 200, the delivery delivered.
      const deliveryId = held.headers['service-delivery-id'] as string;
      const attempts = await eventually(async () => {
        const rows: Array<{ attempt: number; status_code: number | null; error: string | null }> = await ds.query(
        `SELECT attempt, status_code, error FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt`, [deliveryId]);
        return rows.length === 2 && rows[1].status_code === 200 ? rows : null;
      }, 30_000);
      assert.deepEqual(attempts, [{ attempt: 1, status_code: null, error: INTERRUPTED }, { attempt: 2, status_code: 200, error: null }]);
      const [delivery] = await ds.query(`SELECT status, attempt_count FROM webhook_deliveries WHERE id = $1`, [deliveryId]);
      assert.deepEqual(delivery, { status: 'delivered', attempt_count: 2 });
      assert.equal(receiver.requests.length, 2, 'sent twice in all');
      assert.equal(await second.stop('SIGTERM', 30_000), 0, second.output());
    });
});

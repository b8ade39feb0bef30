import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import parsePrometheusTextFormat, { PrometheusFamily } from 'parse-prometheus-text-format';
import { Client as PgClient } from 'pg';
import { verifyWebhookSignature } from '../../clients/typescript/src';
import { generateKeyRingValue } from '../../runtime/secret-box';
import { eventually } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { ROOT, RoleProcess, TSX_NODE, svJson, startRoleProcess } from '../support/role-processes';
import { RoundRobinProxy } from '../support/round-robin-proxy';
import { ctx } from '../support/root-hooks';
import { Cleanup, freePort, startScratchDatabase } from '../support/servers';

/** One sample's value: the family `name`'s sample whose labels include `labels` (0 when there is none). */
function sample(families: PrometheusFamily[], name: string, labels: Record<string, string> = {}): number {
  const family = families.find((f) => f.name === name);
  const found = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  if (!found) return 0;
  return Number(found.value ?? found.count);
}

/**
 * The families of a scrape. The parser folds a labelled histogram into one sample, so each histogram's
 * `_count` series is also given as a family of its own (`<name>_count`), parsed as plain samples.
 */
async function scrape(url: string): Promise<PrometheusFamily[]> {
  const res = await fetch(`${url}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  const text = await res.text();
  const families = parsePrometheusTextFormat(text);
  const counts = families.filter((f) => f.type === 'HISTOGRAM').flatMap((f) => parsePrometheusTextFormat(
    `${text.split('\n').filter((line) => line.startsWith(`${f.name}_count`)).join('\n')}\n`));
  return [...families, ...counts];
}

/**
 * The deployment docker-compose.yml describes, as processes: an external PostgreSQL (a database of its
 * own on the suite's server) and the suite's Temporal, two API processes and one worker, each with a
 * data folder of its own, sharing only SV_SECRET_KEYS, as each container does. The tests run in order
 * on the same processes: scale-out, metrics, a rolling restart of API 1, a worker stopped by SIGTERM.
 */
describe('deployment as processes: two APIs and a worker, one data folder each, one SV_SECRET_KEYS', function () {
  this.timeout(240_000);
  const cleanup: Cleanup = [];
  let scratch: string;
  let worker: RoleProcess;
  let workerMetrics: string;
  const apis: Array<{ url: string; role: RoleProcess }> = [];
  let receiver: Receiver;
  let tenant: { key: string; token: string; cookie: string; csrfToken: string };
  let endpointSecret: string;
  let databaseUrl: string;
  const signalIds: string[] = [];

  const postSignal = (api: string, idempotencyKey: string, extra: Record<string, unknown> = {}) => fetch(`${api}/api/v1/signals`, {
    method: 'POST', headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ endUserId: 'user-42', title: 'Export is slow', body: 'Exports take minutes.', idempotencyKey, ...extra }),
  });

  before(async function () {
    this.timeout(240_000);
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sv-scale-'));
    cleanup.push(async () => fs.rmSync(scratch, { recursive: true, force: true }));
    const dataDir = (role: string) => {
      const dir = path.join(scratch, role);
      fs.mkdirSync(dir, { recursive: true });
      return dir;
    };
    const bundlePath = path.join(scratch, 'workflow-bundle.js');
    fs.writeFileSync(bundlePath, ctx.workflowBundle.code);
    databaseUrl = await startScratchDatabase(cleanup, 'sv_scale');
    const shared = {
      DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: ctx.temporalAddress,
      SV_SECRET_KEYS: generateKeyRingValue(), SV_TASK_QUEUE: `scale-${randomBytes(4).toString('hex')}`,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SV_RELAY_IDLE_MS: '100', LOG_LEVEL: 'error', TEMPORAL_LOG_LEVEL: 'ERROR',
      RATE_LIMIT_PER_MINUTE: '100000', SV_TRUST_PROXY: 'loopback',
      // The suite's fake AI provider: the APIs queue each signal's analysis, the worker asks it.
      AI_BASE_URL: ctx.config.aiBaseUrl!, AI_API_KEY: 'test-key', AI_MODEL: 'fake-model',
    };
    const metricsPort = await freePort();
    workerMetrics = `http://127.0.0.1:${metricsPort}`;
    worker = await startRoleProcess(cleanup, [...TSX_NODE, path.join(ROOT, 'worker', 'main.ts')], {
      ...shared, SV_DATA_DIR: dataDir('worker'), SV_WORKFLOW_BUNDLE: bundlePath, SV_WORKER_METRICS_PORT: String(metricsPort),
      SV_WORKER_SHUTDOWN_GRACE_MS: '2000',
    }, /worker polling task queue/);
    for (const n of [1, 2]) {
      const port = await freePort();
      const role = await startRoleProcess(cleanup, [...TSX_NODE, path.join(ROOT, 'api', 'server.ts')],
        { ...shared, SV_DATA_DIR: dataDir(`api-${n}`), PORT: String(port), SV_API_DRAIN_MS: '1500' }, /API listening on/);
      apis.push({ url: `http://127.0.0.1:${port}`, role });
    }

    const sv = svJson(path.join(ROOT, 'bin', 'sv.js'), { ...shared, SV_DATA_DIR: dataDir('cli') });
    const org = await sv('org', 'create', '--name', 'Scale', '--sponsored');
    const product = await sv('product', 'create', '--org', org.id, '--name', 'Scale app');
    const key = await sv('key', 'create', '--org', org.id, '--product', product.id, '--env', 'production', '--scopes', 'signals:write,inbox:read');
    const teammate = await sv('teammate', 'create', '--org', org.id, '--email', 'owner@scale.test', '--role', 'owner');
    const session = await sv('session', 'create', '--teammate', teammate.id);
    const { token } = await sv('identity-token', '--product', product.id, '--sub', 'user-42', '--ttl', '600');
    tenant = { key: key.secret, token, cookie: session.cookie, csrfToken: session.csrfToken };
    receiver = await Receiver.start();
    cleanup.push(() => receiver.close());
  });

  after(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  });

  it('an end-user token from `sv identity-token` is accepted by both APIs; a signal taken on API 1 is delivered signed by the worker process', async () => {
    for (const { url } of apis) {
      const res = await fetch(`${url}/api/v1/installation`, { headers: { authorization: `Bearer ${tenant.token}` } });
      assert.equal(res.status, 200, `${url}: ${await res.clone().text()}`);
      assert.equal((await res.json() as { data: { endUserId: string } }).data.endUserId, 'user-42');
    }
    // The endpoint's secret is sealed by API 2; the worker opens it to sign.
    const created = await fetch(`${apis[1].url}/api/workspace/webhooks/endpoints`, {
      method: 'POST',
      headers: { cookie: tenant.cookie, 'x-csrf-token': tenant.csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.url}/hook`, subscriptions: ['signal.created'] }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    endpointSecret = (await created.json() as { data: { secret: string } }).data.secret;

    const signal = await postSignal(apis[0].url, 'scale-out-first');
    assert.equal(signal.status, 201, await signal.clone().text());
    const signalId = (await signal.json() as { data: { id: string } }).data.id;
    signalIds.push(signalId);
    const delivery = await eventually(async () => receiver.requests.find((r) => JSON.parse(r.body).data?.signalId === signalId), 60_000);
    assert.ok(verifyWebhookSignature({ body: delivery.body, header: delivery.headers['service-signature'] as string, secrets: endpointSecret }),
      'signed with the endpoint secret API 2 sealed');
    assert.doesNotMatch(worker.output(), /cannot be opened|unable to authenticate/i, worker.output());
    for (const role of ['worker', 'api-1', 'api-2', 'cli']) {
      assert.ok(!fs.existsSync(path.join(scratch, role, 'secret-keys')), `${role} generated no key of its own`);
    }
  });

  it('/metrics on API 1 and on the worker, parsed as Prometheus text after a known workload: the counts match', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await postSignal(apis[0].url, `scale-metrics-${i}`);
      assert.equal(res.status, 201);
      signalIds.push((await res.json() as { data: { id: string } }).data.id);
    }
    for (let i = 0; i < 2; i++) assert.equal((await postSignal(apis[0].url, 'short')).status, 400);
    await eventually(async () => signalIds.every((id) => receiver.requests.some((r) => JSON.parse(r.body).data?.signalId === id)), 60_000);

    const api = await scrape(apis[0].url);
    const route = { method: 'POST', route: '/api/v1/signals' };
    assert.equal(sample(api, 'sv_http_requests_total', { ...route, status: '201' }), 4);
    assert.equal(sample(api, 'sv_http_requests_total', { ...route, status: '400' }), 2);
    assert.equal(sample(api, 'sv_http_request_duration_seconds_count', { ...route, status: '201' }), 4, 'the latency histogram counted each');
    assert.equal(sample(api, 'sv_intake_total', { kind: 'signal', outcome: 'accepted' }), 4);
    assert.equal(sample(api, 'sv_intake_total', { kind: 'signal', outcome: 'refused', code: 'VALIDATION_FAILED' }), 2);
    assert.equal(sample(api, 'sv_http_requests_total', { method: 'GET', route: '/api/v1/installation', status: '200' }), 1);

    // The worker: every delivery attempted once and delivered, every analysis asked of the (fake) provider, nothing left behind.
    const families = await eventually(async () => {
      const scraped = await scrape(workerMetrics);
      return sample(scraped, 'sv_webhook_attempts_total', { outcome: 'delivered' }) === 4
        && sample(scraped, 'sv_ai_operations_total', { operation: 'signal-analysis', outcome: 'succeeded' }) === 4
        && sample(scraped, 'sv_outbox_pending', { queue: 'outbox_events' }) === 0 ? scraped : null;
    }, 60_000);
    assert.equal(sample(families, 'sv_webhook_attempt_duration_seconds_count', { outcome: 'delivered' }), 4);
    assert.equal(sample(families, 'sv_webhook_attempts_total', { outcome: 'refused' }), 0);
    assert.ok(sample(families, 'sv_relay_rows_total', { relay: 'webhook' }) >= 4);
    assert.equal(sample(families, 'sv_outbox_pending', { queue: 'webhook_deliveries' }), 0);
    assert.equal(sample(families, 'sv_outbox_lag_seconds', { queue: 'outbox_events' }), 0);
    assert.ok(families.some((f) => f.name.startsWith('temporal_')), `the Temporal SDK's worker metrics are in the same scrape: ${families.map((f) => f.name).join(' ')}`);
    assert.equal((await fetch(`${workerMetrics}/healthz`)).status, 200);
    assert.equal((await fetch(`${apis[0].url}/readyz`)).status, 200);
  });

  it('rolling restart: SIGTERM on API 1 behind the proxy while traffic runs: no 5xx, no reset, its event stream ends with a retry hint', async () => {
    // A balancer that reads /readyz (every 200 ms) takes API 1 out during its SV_API_DRAIN_MS, before it closes its
    // listener: a connection still waiting in the kernel's accept queue when the listener closes is reset, and a POST
    // cannot be sent again safely.
    const proxy = await RoundRobinProxy.start(apis.map((a) => a.url), 200);
    cleanup.push(() => proxy.close());
    // An inbox stream held by API 1 itself.
    const stream = { text: '', ended: false, failed: '' };
    await new Promise<void>((resolve, reject) => {
      const req = http.get(`${apis[0].url}/api/v1/inbox/stream`, { headers: { authorization: `Bearer ${tenant.token}`, accept: 'text/event-stream' } },
        (res) => {
          assert.equal(res.statusCode, 200);
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            stream.text += chunk;
            if (stream.text.includes('event: ready')) resolve();
          });
          res.on('end', () => (stream.ended = true));
          res.on('aborted', () => (stream.failed = 'aborted'));
          res.on('error', (err) => (stream.failed = err.message));
        });
      req.on('error', reject);
    });

    const client = { ok: 0, serverErrors: 0, failures: [] as string[] };
    let running = true;
    let n = 0;
    const traffic = Promise.all(Array.from({ length: 4 }, async () => {
      while (running) {
        const i = n++;
        try {
          const res = i % 2 === 0
            ? await postSignal(proxy.url, `rolling-${i}-${randomBytes(4).toString('hex')}`)
            : await fetch(`${proxy.url}/api/v1/installation`, { headers: { authorization: `Bearer ${tenant.token}` } });
          await res.arrayBuffer();
          if (res.status >= 500) client.serverErrors++;
          else client.ok++;
        } catch (err) {
          client.failures.push((err as Error).message);
        }
      }
    }));
    await new Promise((r) => setTimeout(r, 1_000));
    const code = await apis[0].role.stop('SIGTERM');
    await new Promise((r) => setTimeout(r, 1_000));
    running = false;
    await traffic;

    console.log(`      rolling restart: ${client.ok} answered, 5xx ${client.serverErrors + proxy.counts.serverErrors}, resets ${proxy.counts.resets + client.failures.length} (refused connections retried on API 2: ${proxy.counts.retriedRefusals})`);
    assert.equal(code, 0, apis[0].role.output());
    assert.ok(client.ok > 20, `traffic ran: ${client.ok}`);
    assert.equal(client.serverErrors + proxy.counts.serverErrors, 0, '5xx');
    assert.equal(proxy.counts.resets, 0, 'resets');
    assert.deepEqual(client.failures, []);
    await eventually(async () => stream.ended, 5_000);
    assert.equal(stream.failed, '');
    const tail = stream.text.slice(stream.text.lastIndexOf('event: ready'));
    assert.match(tail, /retry: \d+\n: the server is stopping; reconnect/);
  });

  it('a worker stopped by SIGTERM with a webhook attempt in flight finishes and records it within its grace, then exits 0', async () => {
    // Every attempt from now on is answered (200) only after 1 s, within the worker's 2 s grace: this signal's is under
    // way when SIGTERM comes. (One that outlives the grace is handed back: test/platform/worker-handback.test.ts.)
    receiver.answer({ hangMs: 1_000 });
    const res = await postSignal(apis[1].url, 'worker-stop-signal');
    assert.equal(res.status, 201);
    const signalId = (await res.json() as { data: { id: string } }).data.id;
    await eventually(async () => receiver.requests.some((r) => r.body.includes(signalId)), 30_000);
    const code = await worker.stop('SIGTERM', 30_000);
    assert.equal(code, 0, worker.output());
    assert.match(worker.output(), /SIGTERM received, stopping/);
    const db = new PgClient({ connectionString: databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query(`SELECT a.attempt, a.status_code FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE d.payload LIKE '%' || $1 || '%'`, [signalId]);
      assert.deepEqual(rows, [{ attempt: 1, status_code: 200 }], 'the attempt under way was answered and logged before the worker ended');
    } finally {
      await db.end();
    }
  });
});

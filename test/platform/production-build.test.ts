import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { verifyWebhookSignature } from '../../clients/typescript/src';
import { generateKeyRingValue } from '../../runtime/secret-box';
import { eventually } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { ROOT, runCommand, svJson, startRoleProcess } from '../support/role-processes';
import { ctx } from '../support/root-hooks';
import { Cleanup, freePort, startScratchDatabase } from '../support/servers';

/** Every file under `dir`. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

/**
 * `npm run build`'s three steps (tsc with tsconfig.build.json, the prebuilt workflow bundle, the pages) into a
 * folder of its own, and the production image's commands run from it with plain `node`: no tsx.
 */
describe('production build: the API, the worker and sv run from dist/ with node alone', function () {
  this.timeout(600_000);
  const cleanup: Cleanup = [];
  let out: string;
  let dist: string;
  after(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  });

  before(async function () {
    this.timeout(600_000);
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'sv-build-'));
    cleanup.push(async () => fs.rmSync(out, { recursive: true, force: true }));
    // The image's node_modules, here the project's, next to dist/ as in /app.
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(out, 'node_modules'));
    dist = path.join(out, 'dist');
    const tsc = await runCommand([process.execPath, path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--outDir', dist],
      {});
    assert.equal(tsc.code, 0, tsc.stdout + tsc.stderr);
    const bundle = await runCommand([process.execPath, path.join(dist, 'bin', 'build-workflow-bundle.js')], {});
    assert.equal(bundle.code, 0, bundle.stdout + bundle.stderr);
    const pages = await runCommand([path.join(ROOT, 'node_modules', '.bin', 'tsx'), path.join(ROOT, 'web', 'build.ts'), path.join(dist, 'web', 'dist')], {});
    assert.equal(pages.code, 0, pages.stdout + pages.stderr);
  });

  it('dist/ holds compiled JavaScript and the workflow bundle, and nothing in it loads tsx', () => {
    const files = filesUnder(dist);
    assert.ok(files.includes(path.join(dist, 'workflow-bundle.js')));
    for (const entry of ['api/server.js', 'worker/main.js', 'bin/sv.js', 'bin/start.js']) assert.ok(files.includes(path.join(dist, entry)), entry);
    assert.deepEqual(files.filter((f) => f.endsWith('.ts')), []);
    assert.deepEqual(files.filter((f) => f.endsWith('.js') && /require\("tsx|from "tsx|import\("tsx/.test(fs.readFileSync(f, 'utf8'))), []);
  });

  it('node dist/worker/main.js loads the prebuilt bundle; node dist/api/server.js takes a signal the worker delivers signed', async () => {
    const shared = {
      DATABASE_URL: await startScratchDatabase(cleanup, 'sv_dist'), TEMPORAL_ADDRESS: ctx.temporalAddress,
      SV_SECRET_KEYS: generateKeyRingValue(), SV_TASK_QUEUE: `dist-${randomBytes(4).toString('hex')}`, SV_DATA_DIR: path.join(out, 'data'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SV_RELAY_IDLE_MS: '100', LOG_LEVEL: 'error', TEMPORAL_LOG_LEVEL: 'ERROR', NODE_ENV: 'production',
    };
    const worker = await startRoleProcess(cleanup, [process.execPath, path.join(dist, 'worker', 'main.js')],
      { ...shared, SV_WORKER_METRICS_PORT: '0' }, /worker polling task queue/);
    assert.match(worker.output(), new RegExp(`workflows from ${path.join(dist, 'workflow-bundle.js').replace(/[.]/g, '\\.')}`));
    const port = await freePort();
    await startRoleProcess(cleanup, [process.execPath, path.join(dist, 'api', 'server.js')], { ...shared, PORT: String(port) }, /API listening on/);
    const api = `http://127.0.0.1:${port}`;
    assert.equal((await fetch(`${api}/readyz`)).status, 200);
    // The pages come built with dist/ (esbuild is not in the image): each file of the manifest is served.
    const manifest = JSON.parse(fs.readFileSync(path.join(dist, 'web', 'dist', 'manifest.json'), 'utf8')) as Record<string, string>;
    for (const file of Object.values(manifest)) assert.equal((await fetch(`${api}/assets/${file}`)).status, 200, file);

    const sv = svJson(path.join(dist, 'bin', 'sv.js'), shared);
    const org = await sv('org', 'create', '--name', 'Built', '--sponsored');
    const product = await sv('product', 'create', '--org', org.id, '--name', 'Built app');
    const key = await sv('key', 'create', '--org', org.id, '--product', product.id, '--env', 'production', '--scopes', 'signals:write');
    const teammate = await sv('teammate', 'create', '--org', org.id, '--email', 'owner@built.test', '--role', 'owner');
    const session = await sv('session', 'create', '--teammate', teammate.id);
    const receiver = await Receiver.start();
    cleanup.push(() => receiver.close());
    const created = await fetch(`${api}/api/workspace/webhooks/endpoints`, {
      method: 'POST', headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.url}/hook`, subscriptions: ['signal.created'] }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const { secret } = (await created.json() as { data: { secret: string } }).data;
    const signal = await fetch(`${api}/api/v1/signals`, {
      method: 'POST', headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ endUserId: 'user-1', title: 'Built', body: 'From dist.', idempotencyKey: 'dist-signal-1' }),
    });
    assert.equal(signal.status, 201, await signal.clone().text());
    const signalId = (await signal.json() as { data: { id: string } }).data.id;
    const delivery = await eventually(async () => receiver.requests.find((r) => JSON.parse(r.body).data?.signalId === signalId), 60_000);
    assert.ok(verifyWebhookSignature({ body: delivery.body, header: delivery.headers['service-signature'] as string, secrets: secret }));
    assert.equal(await worker.stop(), 0, worker.output());
  });
});

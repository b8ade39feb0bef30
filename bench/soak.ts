import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { AddressInfo } from 'node:net';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { DataSource } from 'typeorm';
import { createEndpoint } from '../db/webhooks/webhook-endpoints';
import { createFeature } from '../db/customer-loop/features';
import { createServiceKey } from '../db/platform/service-keys';
import { createSession } from '../db/platform/sessions';
import { createOrganization, createProduct, createTeammate } from '../db/platform/tenancy';
import { EmbeddedPostgresHandle, startEmbeddedPostgres } from '../runtime/embedded-postgres';
import { openDatabase } from '../db/data-source';
import { resolveTemporalCli } from '../runtime/temporal-cli';
import { startTemporalDevServer } from '../runtime/temporal-dev-server';
import { installTemporalLogger } from '../runtime/temporal-logging';
import { verifyWebhookSignature } from '../runtime/webhook-signature';
import { freePort } from '../test/support/servers';
import { quantile } from './stats';

/**
 * The chaos soak (`npm run soak -- --minutes 3`): two API processes behind a round-robin proxy, two
 * workers, mixed traffic, a webhook receiver that fails 30% of the time, a worker killed every 30-90 s,
 * PostgreSQL (a scratch cluster of its own, never the machine's) and the Temporal dev server each
 * restarted once. Everything listens on 127.0.0.1. Then it waits (bounded) for the system to settle,
 * checks that nothing was lost or forged, and prints a table of figures. Not part of `npm test`.
 * Flags: --minutes N (1-30, default 3), --settle-seconds N (30-900, default 600; the checks end as soon as all pass).
 */

const ROOT = path.join(__dirname, '..');
const argMinutes = process.argv.indexOf('--minutes');
const MINUTES = Math.min(30, Math.max(1, Number(argMinutes > 0 ? process.argv[argMinutes + 1] : 3) || 3));
const RUN_MS = MINUTES * 60_000;
const argSettle = process.argv.indexOf('--settle-seconds');
// How long the checks may wait for the backlog to drain after the traffic stops (a loaded machine needs longer).
const SETTLE_MS = Math.min(900, Math.max(30, Number(argSettle > 0 ? process.argv[argSettle + 1] : 600) || 600)) * 1000;
const DEADLINE_GRACE_MS = 60_000;
const DURATIONS = { approvalReminderMs: 10_000, revocationSlaMs: 15_000, deletionRecoveryMs: 15_000 };
const CONCURRENCY = 4;
const LOG_DIR = path.join(os.tmpdir(), 'sv-soak-logs');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pick = <T>(list: T[]): T | undefined => list[Math.floor(Math.random() * list.length)];
const log = (line: string) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}`);

interface Role { name: string; script: string; port?: number; child: ChildProcess | null; stopping: boolean; exits: number; kills: number }

async function main(): Promise<void> {
  installTemporalLogger('ERROR');
  fs.rmSync(LOG_DIR, { recursive: true, force: true });
  fs.mkdirSync(LOG_DIR, { recursive: true });
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sv-soak-'));
  // As root the cluster runs as the postgres user, which must be able to enter this folder.
  fs.chmodSync(scratch, 0o755);
  const secretKeys = `soak:${randomBytes(32).toString('base64')}`;
  process.env.SV_SECRET_KEYS = secretKeys;
  const stops: Array<() => Promise<unknown>> = [];
  const figures: Record<string, string | number> = { 'run length (min)': MINUTES, 'settle bound (s)': SETTLE_MS / 1000 };
  let roles: Role[] = [];

  try {
    // PostgreSQL: a cluster the soak owns, on a free port, restarted once mid-run.
    const pgPort = await freePort();
    const pgOptions = { dir: path.join(scratch, 'pg'), port: pgPort, persistent: true, fixedDir: true };
    let pg: EmbeddedPostgresHandle = await startEmbeddedPostgres(pgOptions);
    stops.push(() => pg.stop());
    await pg.createDatabase('soak');
    const databaseUrl = pg.url('soak');
    const ds: DataSource = await openDatabase(databaseUrl, 4);
    stops.push(() => ds.destroy());

    // Temporal dev server with its history in a file, so a restart keeps every run.
    const temporalPort = await freePort();
    const executable = resolveTemporalCli({ temporalCli: process.env.TEMPORAL_CLI }, log);
    // Its own errors during the restarts are expected; the checks at the end say whether anything was lost.
    const temporalOptions = { executable, namespace: 'default', port: temporalPort, dbFilename: path.join(scratch, 'temporal.db'), logLevel: 'error' as const };
    // On a loaded machine the server may miss the SDK's 5 s start window: try again, a bounded number of times.
    const startTemporal = async (): Promise<TestWorkflowEnvironment> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await startTemporalDevServer(temporalOptions);
        } catch (err) {
          if (attempt >= 10) throw err;
          log(`the Temporal dev server did not start (${(err as Error).message.slice(0, 80)}); again`);
          await sleep(2_000);
        }
      }
    };
    let temporal: TestWorkflowEnvironment = await startTemporal();
    stops.push(() => temporal.teardown());

    // The webhook receiver: fails 30% of attempts, checks every signature, counts every attempt seen.
    const seen = new Map<string, Set<number>>();
    const received = { attempts: 0, failedOnPurpose: 0, badSignatures: 0, repeatedNumbers: 0 };
    let endpointSecret = '';
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.attempts++;
        const body = Buffer.concat(chunks);
        if (!verifyWebhookSignature({ body, header: req.headers['service-signature'] as string | undefined,
          secrets: endpointSecret })) received.badSignatures++;
        const delivery = String(req.headers['service-delivery-id']);
        const attempt = Number(req.headers['service-delivery-attempt']);
        const numbers = seen.get(delivery) ?? new Set<number>();
        if (numbers.has(attempt)) received.repeatedNumbers++;
        numbers.add(attempt);
        seen.set(delivery, numbers);
        const fail = Math.random() < 0.3;
        if (fail) received.failedOnPurpose++;
        res.writeHead(fail ? 503 : 204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    stops.push(() => new Promise((r) => receiver.close(r)));

    // Tenant, key, owner session, webhook endpoint and a feature, written directly.
    const org = await createOrganization(ds, { name: 'Soak', sponsored: true });
    const product = await createProduct(ds, { organizationId: org.id, name: 'Soak' });
    const keyWith = async (scopes: string[]) => (await createServiceKey(ds,
      { organizationId: org.id, productId: product.id, environment: 'production', scopes })).secret;
    const keys = {
      proof: await keyWith(['service:proof:read', 'service:proof:read_private', 'service:proof:write', 'service:proof:submissions:write',
        'service:proof:publish']),
      loop: await keyWith(['service:signals:write', 'service:features:write', 'service:features:read']),
    };
    const owner = await createTeammate(ds, { organizationId: org.id, email: 'owner@soak.test', role: 'owner' });
    const session = await createSession(ds, owner.id, 2);
    endpointSecret = (await createEndpoint(ds, org.id, { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      subscriptions: ['*'] })).secret;
    const feature = await createFeature(ds, org.id, product.id, { title: 'Soak feature', problem: 'Votes under faults' });

    // The workflows bundled once: a restarted worker polls within seconds instead of bundling again.
    const bundlePath = path.join(scratch, 'workflow-bundle.js');
    const bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: new DefaultLogger('WARN') });
    fs.writeFileSync(bundlePath, bundle.code);

    // Two APIs and two workers, each its own process.
    const env = {
      ...process.env, DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`, HOST: '127.0.0.1', SV_DATA_DIR: scratch,
      SV_SECRET_KEYS: secretKeys, SV_TASK_QUEUE: 'soak', SV_WORKFLOW_BUNDLE: bundlePath, SV_TRUST_PROXY: 'loopback', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_INITIAL_MS: '200', WEBHOOK_RETRY_MAX_MS: '2000', WEBHOOK_TIMEOUT_MS: '3000', SV_RELAY_IDLE_MS: '100',
      RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000', LOG_LEVEL: 'error', TEMPORAL_LOG_LEVEL: 'ERROR',
      PROOF_APPROVAL_REMINDER_MS: String(DURATIONS.approvalReminderMs), PROOF_REVOCATION_SLA_MS: String(DURATIONS.revocationSlaMs),
      PROOF_DELETION_RECOVERY_MS: String(DURATIONS.deletionRecoveryMs),
    };
    roles = [
      { name: 'api-1', script: 'api/server.ts', port: await freePort(), child: null, stopping: false, exits: 0, kills: 0 },
      { name: 'api-2', script: 'api/server.ts', port: await freePort(), child: null, stopping: false, exits: 0, kills: 0 },
      { name: 'worker-1', script: 'worker/main.ts', child: null, stopping: false, exits: 0, kills: 0 },
      { name: 'worker-2', script: 'worker/main.ts', child: null, stopping: false, exits: 0, kills: 0 },
    ];
    // A role that dies (killed, or on its own when a dependency went away) is started again.
    const launch = (role: Role) => {
      const child = spawn(process.execPath, ['-r', 'tsx/cjs', role.script], {
        cwd: ROOT, env: { ...env, ...(role.port ? { PORT: String(role.port) } : {}) }, stdio: ['ignore', 'pipe', 'pipe'],
      });
      // Each role's errors go to a file that outlives the run, for reading after a failure.
      const file = fs.createWriteStream(path.join(LOG_DIR, `${role.name}.log`), { flags: 'a' });
      child.stdout!.pipe(file);
      child.stderr!.pipe(file);
      child.once('exit', () => {
        if (role.stopping) return;
        role.exits++;
        setTimeout(() => launch(role), 1_000);
      });
      role.child = child;
    };
    roles.forEach(launch);
    // Whatever ends this process, the roles it started end with it.
    process.once('exit', () => roles.forEach((role) => role.child?.kill('SIGKILL')));
    stops.push(async () => {
      for (const role of roles) {
        role.stopping = true;
        role.child?.kill('SIGKILL');
      }
    });

    // The small round-robin proxy in front of the two APIs; a refused connection tries the other.
    const apiPorts = roles.filter((r) => r.port).map((r) => r.port!);
    let turn = 0;
    const proxy = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const tryPort = (n: number) => {
          const port = apiPorts[(turn + n) % apiPorts.length];
          const upstream = http.request({ host: '127.0.0.1', port, method: req.method, path: req.url,
            headers: { ...req.headers, 'x-forwarded-for': '198.51.100.7' } }, (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
          });
          upstream.on('error', () => {
            if (n + 1 < apiPorts.length) tryPort(n + 1);
            else if (!res.headersSent) res.writeHead(502).end();
            else res.destroy();
          });
          upstream.end(body);
        };
        turn++;
        tryPort(0);
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    stops.push(() => new Promise((r) => proxy.close(r)));
    const base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

    const ready = async () => {
      for (;;) {
        try {
          if ((await fetch(`${base}/readyz`)).status === 200) return;
        } catch { /* not up yet */ }
        await sleep(500);
      }
    };
    await ready();
    // The clock starts once both workers poll (bounded: a worker that never comes up fails the checks).
    const polling = (role: Role) => fs.existsSync(path.join(LOG_DIR, `${role.name}.log`))
      && fs.readFileSync(path.join(LOG_DIR, `${role.name}.log`), 'utf8').includes('worker polling');
    for (const until = Date.now() + 180_000; Date.now() < until && !roles.filter((r) => !r.port).every(polling);) await sleep(500);
    log(`APIs up behind ${base}; workers polling; running ${MINUTES} min`);

    // Every write is retried (same Idempotency-Key) until it gets an answer that is not a fault.
    const latencies: number[] = [];
    const counts = { requests: 0, ok: 0, faults: 0, gaveUp: 0 };
    async function send(method: string, url: string, opts: { body?: unknown; key?: 'proof' | 'loop'; session?: boolean; idempotency?: string } = {}) {
      const headers: Record<string, string> = {};
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      if (opts.key) headers.authorization = `Bearer ${keys[opts.key]}`;
      if (opts.session) Object.assign(headers, { cookie: session.cookie, 'x-csrf-token': session.csrfToken });
      if (opts.idempotency) headers['idempotency-key'] = opts.idempotency;
      const until = Date.now() + 120_000;
      for (;;) {
        counts.requests++;
        const started = performance.now();
        try {
          const res = await fetch(`${base}${url}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
            signal: AbortSignal.timeout(30_000) });
          const text = await res.text();
          const retryable = res.status >= 500 || res.status === 429 || (res.status === 409 && text.includes('IDEMPOTENCY_IN_PROGRESS'));
          if (!retryable) {
            latencies.push(performance.now() - started);
            if (res.status < 300) counts.ok++;
            return { status: res.status, json: text ? JSON.parse(text) : null };
          }
        } catch { /* connection refused or reset: a fault */ }
        counts.faults++;
        if (Date.now() > until) {
          counts.gaveUp++;
          return { status: 0, json: null };
        }
        await sleep(500);
      }
    }

    // What the traffic was told: each 2xx write, to find in the database at the end.
    const written = {
      signals: [] as string[], voters: new Set<string>(), items: [] as Array<{ id: string; versionId: string }>, approved: [] as string[],
      pendingApprovals: [] as string[], revocations: [] as string[], completed: [] as string[], deleted: [] as string[],
      placed: [] as string[], renders: 0, renderFailures: 0,
    };
    const taken = new Set<string>();
    const revoking = new Set<string>();
    const free = () => written.items.filter((i) => !taken.has(i.id));
    let placementId = '';
    {
      const created = await send('POST', '/api/v1/proof/placements', { key: 'proof', body: { name: 'Soak wall', placementType: 'wall', channel: 'website' },
        idempotency: `plc-${randomBytes(6).toString('hex')}` });
      placementId = created.json.data.id;
      await send('POST', `/api/v1/proof/placements/${placementId}/publish`, { key: 'proof', idempotency: `pub-${randomBytes(6).toString('hex')}` });
    }
    const submission = (n: number) => ({
      type: 'text',
      content: { text: `Soak story ${n}: we cut onboarding from 9 days to 2.`, title: `Story ${n}`, rating: 5, attribution: { name: 'Ada Lovelace' } },
      customer: { personRef: `cus_${n}`, email: `c${n}@soak.test`, name: 'Ada Lovelace' },
      consent: {
        displayMode: 'full_name', identityFields: ['name'], channels: ['website', 'in_app', 'email'], products: { all: true }, media: ['text'],
        paidUseAllowed: false, translationAllowed: true, geography: ['*'], validUntil: null, customerApprovedWording: true,
      },
    });
    let serial = 0;
    const operations: Array<[number, () => Promise<void>]> = [
      [3, async () => {
        const n = ++serial;
        const res = await send('POST', '/api/v1/signals', { key: 'loop',
          body: { endUserId: `user-${n % 40}`, title: `Signal ${n}`, body: 'Exports are slow under load.',
            idempotencyKey: `sig-${n}-${randomBytes(4).toString('hex')}` } });
        if (res.status < 300 && res.status > 0) written.signals.push(res.json.data.id);
      }],
      [2, async () => {
        const voter = `voter-${Math.floor(Math.random() * 60)}`;
        const res = await send('POST', `/api/v1/features/${feature.id}/votes`, { key: 'loop', body: { endUserId: voter } });
        if (res.status === 200) written.voters.add(voter);
      }],
      [3, async () => {
        const n = ++serial;
        const res = await send('POST', '/api/v1/proof/submissions', { key: 'proof', body: submission(n),
          idempotency: `sub-${n}-${randomBytes(4).toString('hex')}` });
        if (res.status === 201) written.items.push({ id: res.json.data.proofItemId, versionId: res.json.data.originalVersionId });
      }],
      [2, async () => {
        const item = pick(free());
        if (!item) return;
        taken.add(item.id);
        const asked = await send('POST', `/api/v1/proof/items/${item.id}/request-approval`,
          { key: 'proof', body: { versionId: item.versionId }, idempotency: `apr-${item.id}` });
        if (asked.status !== 200) return;
        // Some stay pending, so their reminders must come.
        if (Math.random() < 0.3) {
          written.pendingApprovals.push(item.id);
          return;
        }
        const approved = await send('POST', `/api/workspace/proof/items/${item.id}/approve`, { session: true, body: { versionId: item.versionId } });
        if (approved.status === 200) {
          written.approved.push(item.id);
          const placed = await send('POST', `/api/v1/proof/placements/${placementId}/items`,
            { key: 'proof', body: { proofItemId: item.id }, idempotency: `ppi-${item.id}` });
          if (placed.status === 201) written.placed.push(item.id);
        }
      }],
      [1, async () => {
        const id = pick(written.approved.filter((a) => !written.revocations.includes(a) && !revoking.has(a)));
        if (!id) return;
        // Two clients never file for the same item at once.
        revoking.add(id);
        const res = await send('POST', `/api/v1/proof/items/${id}/revoke`, { key: 'proof', body: {}, idempotency: `rev-${id}` });
        if (res.status !== 202) return;
        written.revocations.push(id);
        // Half are completed by a person; the others must escalate when their SLA passes.
        if (Math.random() < 0.5) {
          const done = await send('POST', `/api/workspace/proof/revocations/${res.json.data.revocation.id}/complete`, { session: true });
          if (done.status === 200) written.completed.push(id);
        }
      }],
      [1, async () => {
        const item = pick(free());
        if (!item) return;
        taken.add(item.id);
        const res = await send('DELETE', `/api/workspace/proof/items/${item.id}`, { session: true });
        if (res.status === 200) written.deleted.push(item.id);
      }],
      [3, async () => {
        const res = await send('GET', `/api/public/proof/render/${placementId}`);
        if (res.status === 200) written.renders++;
        else written.renderFailures++;
      }],
    ];
    const weighted = operations.flatMap(([weight, op]) => Array.from({ length: weight }, () => op));

    // Chaos: a worker killed every 30-90 s; PostgreSQL restarted at a third, Temporal at two thirds.
    const startedAt = Date.now();
    const endAt = startedAt + RUN_MS;
    const chaos = { workerKills: 0, pgRestartMs: 0, temporalRestartMs: 0 };
    const killer = (async () => {
      for (;;) {
        const wait = 30_000 + Math.random() * 60_000;
        if (Date.now() + wait >= endAt) break;
        await sleep(wait);
        const worker = pick(roles.filter((r) => r.script.startsWith('worker')))!;
        log(`killing ${worker.name}`);
        worker.kills++;
        chaos.workerKills++;
        worker.child?.kill('SIGKILL');
      }
    })();
    const restarts = (async () => {
      await sleep(RUN_MS / 3);
      log('restarting PostgreSQL');
      let t = performance.now();
      await pg.stop();
      await sleep(3_000);
      pg = await startEmbeddedPostgres(pgOptions);
      chaos.pgRestartMs = Math.round(performance.now() - t);
      await sleep(RUN_MS / 3 - chaos.pgRestartMs);
      log('restarting the Temporal dev server');
      t = performance.now();
      await temporal.teardown();
      await sleep(3_000);
      temporal = await startTemporal();
      chaos.temporalRestartMs = Math.round(performance.now() - t);
    })();
    // A restart that fails for good ends the run after the traffic, not in the middle of it.
    const restartsDone = restarts.then(() => null, (err: Error) => err);
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < endAt) await pick(weighted)!();
    }));
    await killer;
    const restartFailure = await restartsDone;
    if (restartFailure) throw restartFailure;
    log(`traffic stopped after ${((Date.now() - startedAt) / 1000).toFixed(0)} s; settling (at most ${SETTLE_MS / 1000} s)`);

    // Checks, repeated until all pass or the settle time is up.
    const q = async <T>(sql: string, params: unknown[] = []): Promise<T[]> => ds.query(sql, params);
    const trafficEnd = new Date();
    async function check() {
      const problems: Record<string, number> = {};
      const missing = async (name: string, table: string, ids: string[]) => {
        if (ids.length === 0) return;
        const [row] = await q<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE id = ANY($1)`, [ids]);
        problems[name] = ids.length - row.n;
      };
      await missing('2xx signals missing', 'signals', written.signals);
      await missing('2xx submissions missing', 'proof_items', written.items.map((i) => i.id));
      const [votes] = await q<{ n: number }>(`SELECT count(*)::int AS n FROM feature_votes WHERE feature_id = $1 AND end_user_id = ANY($2)`,
        [feature.id, [...written.voters]]);
      problems['2xx votes missing'] = written.voters.size - votes.n;
      const ledgerMissing = async (name: string, type: string, ids: string[]) => {
        if (ids.length === 0) return;
        const [row] = await q<{ n: number }>(`SELECT count(DISTINCT proof_item_id)::int AS n FROM proof_events WHERE event_type = $1 AND proof_item_id = ANY($2)`, [type, ids]);
        problems[name] = ids.length - row.n;
      };
      await ledgerMissing('submissions without ledger event', 'proof.response.submitted', written.items.map((i) => i.id));
      await ledgerMissing('approvals without ledger event', 'proof.item.approved', written.approved);
      await ledgerMissing('revocations without ledger event', 'proof.revocation.requested', [...new Set(written.revocations)]);
      await ledgerMissing('deletions without ledger event', 'proof.item.deleted', written.deleted);
      const [deliveries] = await q<{ pending: number; unlogged: number }>(
        `SELECT count(*) FILTER (WHERE d.status = 'pending')::int AS pending,
                count(*) FILTER (WHERE d.status <> 'pending' AND (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id) = 0)::int AS unlogged
           FROM webhook_deliveries d`);
      problems['deliveries neither delivered nor failed'] = deliveries.pending;
      problems['finished deliveries with no attempt logged'] = deliveries.unlogged;
      // Every attempt the receiver saw is in the delivery log under the number it carried.
      const logged = await q<{ delivery_id: string; attempt: number }>(`SELECT delivery_id, attempt FROM webhook_attempts`);
      const loggedSet = new Set(logged.map((r) => `${r.delivery_id}#${r.attempt}`));
      let unloggedSeen = 0;
      for (const [delivery, numbers] of seen) for (const n of numbers) if (!loggedSet.has(`${delivery}#${n}`)) unloggedSeen++;
      problems['attempts seen but not logged'] = unloggedSeen;
      problems['attempt numbers sent twice'] = received.repeatedNumbers;
      problems['deliveries with a bad signature'] = received.badSignatures;
      const graceAgo = new Date(Date.now() - DEADLINE_GRACE_MS);
      const [stuck] = await q<{ revocations: number; purges: number; reminders: number; commands: number }>(
        `SELECT (SELECT count(*) FROM proof_revocations WHERE resolution_state = 'pending' AND sla_deadline_at < $1)::int AS revocations,
                (SELECT count(*) FROM proof_items i WHERE i.status = 'deleted' AND i.recovery_closes_at < $1
                   AND NOT EXISTS (SELECT 1 FROM proof_events e WHERE e.proof_item_id = i.id AND e.event_type = 'proof.item.purged'))::int AS purges,
                (SELECT count(*) FROM proof_approval_requests WHERE state = 'pending' AND reminders_sent = 0
                   AND created_at < $1::timestamptz - make_interval(secs => $2 / 1000.0))::int AS reminders,
                (SELECT count(*) FROM workflow_commands WHERE processed_at IS NULL)::int AS commands`,
        [graceAgo, DURATIONS.approvalReminderMs]);
      problems['revocations past SLA, not escalated'] = stuck.revocations;
      problems['deletions past window, not purged'] = stuck.purges;
      problems['pending approvals with no reminder'] = stuck.reminders;
      problems['workflow commands not done'] = stuck.commands;
      return problems;
    }
    const settleUntil = Date.now() + SETTLE_MS;
    // Deadlines made in the last seconds of traffic need their own time plus the grace to be judged.
    await sleep(Math.max(DURATIONS.deletionRecoveryMs, DURATIONS.revocationSlaMs));
    let problems: Record<string, number> = {};
    for (;;) {
      try {
        problems = await check();
        const pastDeadlines = Date.now() - trafficEnd.getTime() > DEADLINE_GRACE_MS + DURATIONS.deletionRecoveryMs;
        if (Object.values(problems).every((n) => n === 0) && pastDeadlines) break;
      } catch (err) {
        log(`check failed: ${(err as Error).message}`);
      }
      if (Date.now() > settleUntil) break;
      await sleep(3_000);
    }
    // The ledger refuses changes: an UPDATE of a row must fail.
    let ledgerAppendOnly = false;
    try {
      await ds.query(`UPDATE proof_events SET event_type = event_type WHERE id = (SELECT id FROM proof_events LIMIT 1)`);
    } catch {
      ledgerAppendOnly = true;
    }
    const [totals] = await q<Record<string, number>>(
      `SELECT (SELECT count(*) FROM proof_events)::int AS ledger,
              (SELECT count(*) FROM webhook_deliveries WHERE status = 'delivered')::int AS delivered,
              (SELECT count(*) FROM webhook_deliveries WHERE status = 'failed')::int AS failed,
              (SELECT count(*) FROM webhook_attempts)::int AS attempts,
              (SELECT count(*) FROM webhook_attempts WHERE error LIKE 'interrupted%')::int AS interrupted,
              (SELECT count(*) FROM proof_revocations WHERE escalated_at IS NOT NULL)::int AS escalated,
              (SELECT count(*) FROM proof_events WHERE event_type = 'proof.item.purged')::int AS purged,
              (SELECT coalesce(sum(reminders_sent), 0) FROM proof_approval_requests)::int AS reminders`);
    const sorted = [...latencies].sort((a, b) => a - b);
    Object.assign(figures, {
      'requests sent (incl. retries)': counts.requests, '2xx answers': counts.ok, 'faults retried (5xx, 429, refused)': counts.faults,
      'requests given up (120 s)': counts.gaveUp, 'latency p50 / p99 (ms)': `${quantile(sorted, 0.5).toFixed(0)} / ${quantile(sorted, 0.99).toFixed(0)}`,
      'signals / votes (voters) / submissions': `${written.signals.length} / ${written.voters.size} / ${written.items.length}`,
      'approved / left pending / placed': `${written.approved.length} / ${written.pendingApprovals.length} / ${written.placed.length}`,
      'revocations filed / completed / escalated': `${written.revocations.length} / ${written.completed.length} / ${totals.escalated}`,
      'deletions / purged': `${written.deleted.length} / ${totals.purged}`,
      'renders 200 / other': `${written.renders} / ${written.renderFailures}`,
      'approval reminders recorded': totals.reminders,
      'webhook deliveries delivered / failed': `${totals.delivered} / ${totals.failed}`,
      'attempts logged / seen by receiver (30% refused)': `${totals.attempts} / ${received.attempts}`,
      'attempts logged as interrupted': totals.interrupted,
      'worker kills / role restarts': `${chaos.workerKills} / ${roles.reduce((n, r) => n + r.exits, 0)}`,
      'PostgreSQL restart / Temporal restart (ms)': `${chaos.pgRestartMs} / ${chaos.temporalRestartMs}`,
      'ledger rows; UPDATE refused': `${totals.ledger}; ${ledgerAppendOnly ? 'yes' : 'NO'}`,
      ...Object.fromEntries(Object.entries(problems).map(([k, v]) => [`check: ${k}`, v])),
    });
    const failed = !ledgerAppendOnly || Object.values(problems).some((n) => n !== 0);
    const width = Math.max(...Object.keys(figures).map((k) => k.length));
    console.log(`\n| ${'figure'.padEnd(width)} | value |\n|${'-'.repeat(width + 2)}|-------|`);
    for (const [k, v] of Object.entries(figures)) console.log(`| ${k.padEnd(width)} | ${v} |`);
    console.log(failed ? '\nSOAK FAILED: a check above is not 0' : '\nsoak passed: every check is 0');
    process.exitCode = failed ? 1 : 0;
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

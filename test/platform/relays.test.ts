import assert from 'node:assert/strict';
import { DataSource } from 'typeorm';
import { claimSignalsForAnalysis } from '../../db/customer-loop/signal-analysis';
import { IntakeCounters, createSignal } from '../../db/customer-loop/signals';
import { enqueueEvent } from '../../db/outbox';
import { createOrganization, createProduct } from '../../db/platform/tenancy';
import { createEndpoint } from '../../db/webhooks/webhook-endpoints';
import { dispatchDeliveries, publishOutbox } from '../../db/webhooks/webhook-publisher';
import { openDatabase } from '../../db/data-source';
import { Config, loadConfig } from '../../runtime/config';
import { workerRelays } from '../../worker/main';
import { Client } from '@temporalio/client';
import { newId } from '../../db/rules/ids';
import { webhookRelay } from '../../worker/webhooks/webhook-relay';
import { webhookBatchWorkflow } from '../../workflows/webhooks/webhook-batch-workflow';
import { ctx } from '../support/root-hooks';
import { Cleanup, startScratchDatabase } from '../support/servers';

// A database of their own: the suite's worker must not claim these rows first.
describe('relays claim in a short transaction and call Temporal outside it', () => {
  const cleanup: Cleanup = [];
  let ds: DataSource;
  let organizationId: string;
  let productId: string;

  before(async function () {
    this.timeout(120_000);
    ds = await openDatabase(await startScratchDatabase(cleanup, 'sv_relay'), 4);
    cleanup.push(() => ds.destroy());
    const org = await createOrganization(ds, { name: 'Relay workspace', sponsored: true });
    organizationId = org.id;
    productId = (await createProduct(ds, { organizationId, name: 'Relay product' })).id;
  });

  after(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it('without an AI provider no analysis relay runs (no workflow per signal that could only fail)', () => {
    const names = (config: Config) => workerRelays(config, ds, new Client()).map((r) => r.name);
    const base = loadConfig({});
    assert.deepEqual(names({ ...base, aiBaseUrl: undefined, aiModel: undefined }), ['webhook', 'workflow-command']);
    assert.ok(names({ ...base, aiBaseUrl: 'http://127.0.0.1:1/v1', aiModel: 'm' }).includes('signal-analysis'));
  });

  it('webhook dispatch holds no row lock while starting, and a failed start is claimed again', async () => {
    await createEndpoint(ds, organizationId, { url: 'https://example.com/hook', subscriptions: ['*'] });
    await ds.transaction(async (em) => {
      for (let i = 0; i < 3; i++) await enqueueEvent(em, { organizationId, productId, type: 'test.event', data: { i } });
    });
    assert.equal(await publishOutbox(ds, 10), 3);
    let lockedDuringStart = true;
    const handled = await dispatchDeliveries(ds, 10, async (deliveries) => {
      const ids = deliveries.map((d) => d.id);
      // Another connection can lock them: the claim committed before this call.
      await ds.transaction(async (em) => {
        await em.query('SELECT id FROM webhook_deliveries WHERE id = ANY($1) FOR UPDATE NOWAIT', [ids]);
      });
      lockedDuringStart = false;
      return ids.slice(1);
    });
    assert.equal(handled, 3);
    assert.equal(lockedDuringStart, false);
    const rows: Array<{ workflow_started: boolean; claimed: boolean }> = await ds.query(
      `SELECT workflow_started, dispatch_claimed_until > now() AS claimed FROM webhook_deliveries ORDER BY workflow_started`);
    assert.deepEqual(rows.map((r) => r.workflow_started), [false, true, true]);
    assert.equal(rows[0].claimed, true, 'the failed one waits a moment, then is claimed again');
    await ds.query(`UPDATE webhook_deliveries SET dispatch_claimed_until = now() WHERE NOT workflow_started`);
    assert.equal(await dispatchDeliveries(ds, 10, async (d) => d.map((x) => x.id)), 1);
  });

  it('a webhook relay tick starts several batches of WEBHOOK_BATCH_SIZE together, each delivery in exactly one', async () => {
    await ds.query(`UPDATE webhook_deliveries SET workflow_started = true`);
    const org = await createOrganization(ds, { name: 'Tick workspace', sponsored: true });
    await createEndpoint(ds, org.id, { url: 'https://example.com/tick', subscriptions: ['*'] });
    await ds.transaction(async (em) => {
      for (let i = 0; i < 7; i++) await enqueueEvent(em, { organizationId: org.id, productId: null, type: 'test.event', data: { i } });
    });
    // Started on a task queue no worker polls: the batches are only looked at, never run.
    const config = { ...ctx.config, webhookBatchSize: 3, taskQueue: `relay-tick-${newId('q')}` };
    const batches: string[][] = [];
    const spy = { workflow: { start: (workflow: unknown, options: { args: [{ deliveries: Array<{ id: string }> }] }) => {
      batches.push(options.args[0].deliveries.map((d) => d.id));
      return ctx.temporal.workflow.start(workflow as typeof webhookBatchWorkflow, options as never);
    } } } as unknown as Client;
    const relay = webhookRelay(ds, spy, config);
    assert.equal(relay.batchSize, 3 * 4, 'up to four batches a tick');
    assert.equal(await relay.tick(relay.batchSize), 7);
    assert.deepEqual(batches.map((b) => b.length).sort(), [1, 3, 3]);
    const rows: Array<{ id: string; workflow_started: boolean }> = await ds.query(
      `SELECT id, workflow_started FROM webhook_deliveries WHERE organization_id = $1`, [org.id]);
    assert.deepEqual(new Set(batches.flat()), new Set(rows.map((r) => r.id)));
    assert.equal(batches.flat().length, 7, 'no delivery in two batches');
    assert.ok(rows.every((r) => r.workflow_started));
    assert.equal(await relay.tick(relay.batchSize), 0);
  });

  it('one failed analysis start does not roll back the others, and is not counted twice', async () => {
    const limits = { monthlyAllowance: 100, dailyCeiling: 1000, analysisAvailable: true };
    for (let i = 0; i < 3; i++) {
      await createSignal(ds, new IntakeCounters(ds), { organizationId, productId }, { endUserId: `u${i}`, title: 't', body: 'b', idempotencyKey: `relay-${i}` },
        limits);
    }
    let calls = 0;
    await assert.rejects(claimSignalsForAnalysis(ds, 10, 100, async () => {
      calls += 1;
      if (calls === 2) throw new Error('Temporal said no');
    }), /1 analysis start/);
    const queued: Array<{ n: number }> = await ds.query(`SELECT count(*)::int AS n FROM signals WHERE analysis_queued_at IS NOT NULL`);
    assert.equal(queued[0].n, 2);
    await ds.query(`UPDATE signals SET analysis_claimed_until = now() WHERE analysis_queued_at IS NULL`);
    assert.equal(await claimSignalsForAnalysis(ds, 10, 100, async () => undefined), 1);
    const counters: Array<{ count: number }> = await ds.query(
      `SELECT count FROM intake_counters WHERE organization_id = $1 AND period LIKE 'analysis:%'`, [organizationId]);
    assert.equal(counters[0].count, 3);
  });

  it('the analysis relay starts at most the monthly allowance, flags what it leaves over it, and leaves the daily ceiling alone', async () => {
    // The relay counts analyses on its own exact `analysis:` row, not intake's leased `month:` units, and
    // clears `over_allowance` on what it promotes: neither may let a month or a day pass its bound.
    const org = await createOrganization(ds, { name: 'Allowance workspace', sponsored: true });
    const tenant = { organizationId: org.id, productId: (await createProduct(ds, { organizationId: org.id, name: 'P' })).id };
    const limits = { monthlyAllowance: 3, dailyCeiling: 5, analysisAvailable: true };
    const counters = new IntakeCounters(ds);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await createSignal(ds, counters, tenant, { endUserId: `a${i}`, title: 't', body: 'b', idempotencyKey: `allow-${i}` }, limits)).id);
    }
    await assert.rejects(createSignal(ds, counters, tenant, { endUserId: 'a5', title: 't', body: 'b', idempotencyKey: 'allow-5' }, limits),
      (err: Error & { code?: string }) => err.code === 'INTAKE_SAFETY_CEILING');
    const flags = async () => (await ds.query(
      `SELECT analysis_state, over_allowance FROM signals WHERE organization_id = $1 ORDER BY created_at, id`,
      [org.id]) as Array<{ analysis_state: string; over_allowance: boolean }>)
      .map((r) => `${r.analysis_state}${r.over_allowance ? ' over' : ''}`);
    assert.deepEqual(await flags(), ['pending', 'pending', 'pending', 'waiting over', 'waiting over']);
    // What another process's unspent month units leave: the second signal flagged early, the
    // fourth counted within the allowance on a unit that was given back.
    await ds.query(`UPDATE signals SET analysis_state = 'waiting', over_allowance = true WHERE id = $1`, [ids[1]]);
    await ds.query(`UPDATE signals SET analysis_state = 'pending', over_allowance = false WHERE id = $1`, [ids[3]]);
    const daySum = async () => (await ds.query(
      `SELECT sum(count)::int AS n FROM intake_counters WHERE organization_id = $1 AND period LIKE 'day:%'`, [org.id]))[0].n as number;
    assert.equal(await daySum(), 5);

    const started: string[] = [];
    await claimSignalsForAnalysis(ds, 10, limits.monthlyAllowance, async (signal) => {
      if (signal.organizationId === org.id) started.push(signal.id);
    });
    assert.deepEqual(started, ids.slice(0, 3), 'exactly the allowance, first come first served, the early flag cleared');
    const [analysis]: Array<{ count: number }> = await ds.query(
      `SELECT count FROM intake_counters WHERE organization_id = $1 AND period LIKE 'analysis:%'`, [org.id]);
    assert.equal(analysis.count, 3);
    // The fourth now waits for the allowance, and says so: never more signals within it than it allows.
    assert.deepEqual(await flags(), ['pending', 'pending', 'pending', 'waiting over', 'waiting over']);
    assert.equal(await daySum(), 5, 'the relay does not count against the day');
    await assert.rejects(createSignal(ds, counters, tenant, { endUserId: 'a6', title: 't', body: 'b', idempotencyKey: 'allow-6' }, limits),
      (err: Error & { code?: string }) => err.code === 'INTAKE_SAFETY_CEILING');
    // Four relays at once start nothing more.
    await Promise.all(Array.from({ length: 4 }, () => claimSignalsForAnalysis(ds, 2, limits.monthlyAllowance, async (signal) => {
      if (signal.organizationId === org.id) started.push(signal.id);
    })));
    assert.equal(started.length, 3);
  });
});

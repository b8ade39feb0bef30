import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/app';
import { openDatabase } from '../../db/data-source';
import { LOOP_SCOPES, postSignal, teammate } from '../support/customer-loop';
import { asTeammate, call, createTenant, errorCode, settledHandle } from '../support/fixtures';
import { approvedItem, createProofTenant, ledgerTypes } from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import { TcpProxy } from '../support/tcp-proxy';
import { deletionWorkflowId, threadSlaWorkflowId } from '../../workflows/workflow-ids';

describe('durability: a committed change never waits on, or is lost to, a Temporal outage', () => {
  let deadTemporal: Client;
  let app: FastifyInstance;

  before(async () => {
    // Nothing listens on port 1: every call of this client fails as if the Temporal server were down.
    const connection = Connection.lazy({ address: '127.0.0.1:1' });
    deadTemporal = new Client({ connection });
    app = await buildApp({ dataSource: ctx.dataSource, temporal: deadTemporal, config: { ...ctx.config, proofDeletionRecoveryMs: 800 } });
    await app.ready();
  });

  after(async () => {
    await app.close();
    await deadTemporal.connection.close();
  });

  it('a DELETE answers at once while Temporal is down, and the purge still happens', async () => {
    const tenant = await createProofTenant();
    const s = await approvedItem(tenant);
    const res = await call(asTeammate(tenant.owner, { method: 'DELETE', url: `/api/workspace/proof/items/${s.proofItemId}` }), app);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(await (await settledHandle(deletionWorkflowId(s.proofItemId))).result(), 'purged');
    assert.ok((await ledgerTypes(s.proofItemId)).includes('proof.item.purged'));
  });

  it('a promised update set while Temporal is down still escalates when it passes', async () => {
    const t = await createTenant(LOOP_SCOPES);
    const { threadId } = await postSignal(t);
    const due = new Date(Date.now() + 800).toISOString();
    const res = await call(teammate(t.owner, 'PATCH', `/api/workspace/threads/${threadId}`, { nextUpdateAt: due }), app);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(await (await settledHandle(threadSlaWorkflowId(threadId))).result(), 'escalated');
  });
});

describe('durability: a dependency that is down answers 503', () => {
  it('PostgreSQL unreachable: 503 SERVICE_UNAVAILABLE in the envelope, not 500', async () => {
    const url = new URL(ctx.databaseUrl);
    const proxy = new TcpProxy(url.hostname === 'localhost' ? '127.0.0.1' : url.hostname, Number(url.port || 5432));
    url.hostname = '127.0.0.1';
    url.port = String(await proxy.start());
    const ds = await openDatabase(url.toString(), 2);
    const app = await buildApp({ dataSource: ds, temporal: ctx.temporal, config: ctx.config });
    await app.ready();
    try {
      const tenant = await createProofTenant();
      await proxy.cut();
      const res = await call(asTeammate(tenant.owner, { method: 'GET', url: '/api/workspace/proof/review-queue' }), app);
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(errorCode(res), 'SERVICE_UNAVAILABLE');
      assert.equal(res.headers['retry-after'], '1', 'a client knows when to try again');
    } finally {
      await app.close();
      await ds.destroy().catch(() => undefined);
    }
  });

  it('Temporal unreachable on a call the API makes: 503 SERVICE_UNAVAILABLE', async () => {
    const dead = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) });
    const app = await ctx.buildApp({}, (a) => {
      a.get('/test/temporal-call', { config: { auth: 'public', summary: 'test only' } }, async () =>
        dead.connection.withDeadline(Date.now() + 300, () => dead.workflow.getHandle('nothing').describe()));
    });
    const res = await call({ method: 'GET', url: '/test/temporal-call' }, app);
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(errorCode(res), 'SERVICE_UNAVAILABLE');
    await dead.connection.close();
  });
});

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { FastifyInstance, InjectOptions } from 'fastify';
import { startOperation } from '../../db/ai/ai-operations';
import { sourceForModel, summarySource } from '../../db/ai/ai-sources';
import { ProofAiOperation, ProofAsset } from '../../db/entities';
import { HONEST, budgetUsed, marker, storyS, withReply } from '../support/ai-fixtures';
import { call, errorCode, settledHandle, withKey } from '../support/fixtures';
import { ProofTenant, approvedItem, createProofTenant } from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import { openRoom, roomsTenant, say } from '../support/rooms';
import { aiOperationWorkflowId } from '../../workflows/workflow-ids';

const keyOf = (name: string) => ({ 'idempotency-key': `${name}-${randomBytes(6).toString('hex')}` });
const callsMentioning = (m: string) => ctx.fakeAi.requestsMentioning(m);

/**
 * An AI route's answer is stored only after its workflow ends. Under an Idempotency-Key the operation
 * (and its workflow) is named by the key, so a retry whose answer was lost, or that outlived the route's
 * wait, attaches to the same run: one provider call, one budget unit, one record.
 */
describe('ai: a retry with the same Idempotency-Key attaches to the first operation', function () {
  this.timeout(60_000);
  let tenant: ProofTenant;
  let m: string;
  let itemId: string;
  let caseItem: { proofItemId: string; originalVersionId: string };
  let losing: FastifyInstance;

  before(async () => {
    tenant = await createProofTenant();
    m = marker();
    itemId = (await approvedItem(tenant, storyS(m))).proofItemId;
    caseItem = await approvedItem(tenant, storyS(m, { channels: ['website', 'email', 'case_study'] }));
    // The answer is lost after the workflow ran, as if the API had died before replying: the key is free again.
    losing = await ctx.buildApp({}, (a) => {
      a.addHook('preSerialization', async (request, _reply, payload) => {
        if (request.headers['x-test-lose-answer'] && !(payload as { error?: unknown }).error) throw new Error('process died');
        return payload;
      });
    }, { checkAnswers: false });
  });

  const operations = () => ctx.dataSource.getRepository(ProofAiOperation).countBy({ organizationId: tenant.organizationId });
  const assets = () => ctx.dataSource.getRepository(ProofAsset).countBy({ productId: tenant.product.id, assetType: 'case_study' });

  async function loseThenRetry(name: string, request: InjectOptions, status: number, reply: object): Promise<void> {
    const headers = { ...keyOf(name) };
    const before = { calls: callsMentioning(m), used: await budgetUsed(tenant.organizationId), ops: await operations(), assets: await assets() };
    const lost = await withReply(m, reply, () => call(withKey(tenant.key, { ...request, headers: { ...headers, 'x-test-lose-answer': '1' } }), losing));
    assert.equal(lost.statusCode, 500, `${name}: the answer was lost`);
    const retry = await withReply(m, reply, () => call(withKey(tenant.key, { ...request, headers })));
    assert.equal(retry.statusCode, status, `${name}: ${retry.body}`);
    const data = retry.json().data;
    assert.equal(callsMentioning(m) - before.calls, 1, `${name}: one provider call`);
    assert.equal(await budgetUsed(tenant.organizationId) - before.used, 1, `${name}: one budget unit`);
    assert.equal(await operations() - before.ops, 1, `${name}: one operation record`);
    const op = await ctx.dataSource.getRepository(ProofAiOperation).findOneByOrFail({ id: data.operationId });
    assert.equal(op.status, 'succeeded');
    assert.deepEqual(op.result, data, `${name}: the retry answers the first run's result`);
    if (name === 'case-study') assert.equal(await assets() - before.assets, 1, 'one case-study asset');
  }

  it('summarize, ask draft and case study: the lost answer is found again, not paid for twice', async () => {
    await loseThenRetry('summarize', { method: 'POST', url: `/api/v1/proof/items/${itemId}/summarize` }, 200, { json: HONEST });
    await loseThenRetry('draft', { method: 'POST', url: '/api/v1/proof/requests/draft', payload: { recipientName: 'Ada', context: `onboarding ${m}` } }, 200,
      { json: { subject: 'Would you share your story?', body: 'Hi Ada, would you tell others how onboarding went?' } });
    const statement = { text: 'Ada said "We cut onboarding from 9 days to 2".',
      citations: [{ sourceVersionId: caseItem.originalVersionId, quote: 'We cut onboarding from 9 days to 2' }] };
    await loseThenRetry('case-study', { method: 'POST', url: '/api/v1/proof/case-studies', payload: { proofItemIds: [caseItem.proofItemId] } }, 201,
      { json: { title: 'Faster onboarding', sections: [{ heading: 'Results', statements: [statement] }] } });
  });

  it('past SV_AI_WAIT_MS: 503 still_running with the operation id; the retry waits for the same run', async () => {
    const impatient = await ctx.buildApp({ aiWaitMs: 200 });
    const headers = keyOf('slow');
    const before = { calls: callsMentioning(m), used: await budgetUsed(tenant.organizationId), ops: await operations() };
    const off = ctx.fakeAi.when(m, { json: HONEST, delayMs: 1_500 });
    try {
      const first = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${itemId}/summarize`, headers }), impatient);
      assert.equal(first.statusCode, 503, first.body);
      assert.equal(errorCode(first), 'AI_UNAVAILABLE');
      const details = first.json().error.details;
      assert.deepEqual({ reason: details.reason, attempts: details.attempts }, { reason: 'still_running', attempts: 0 });
      assert.match(details.operationId, /^aiop_/);
      const record = await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/proof/ai-operations/${details.operationId}` }));
      assert.equal(record.json().data.status, 'running', 'the run goes on');
      const retry = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${itemId}/summarize`, headers }));
      assert.equal(retry.statusCode, 200, retry.body);
      assert.equal(retry.json().data.operationId, details.operationId);
    } finally {
      off();
    }
    assert.equal(callsMentioning(m) - before.calls, 1, 'one provider call');
    assert.equal(await budgetUsed(tenant.organizationId) - before.used, 1, 'one budget unit');
    assert.equal(await operations() - before.ops, 1, 'one record');
  });

  it('after a provider failure the same key runs again under the same operation; another body is another operation', async () => {
    const headers = keyOf('fail');
    const used = await budgetUsed(tenant.organizationId);
    const failed = await withReply(m, { status: 500 }, () => call(withKey(tenant.key,
      { method: 'POST', url: `/api/v1/proof/items/${itemId}/summarize`, headers })));
    assert.equal(failed.statusCode, 503, failed.body);
    const operationId = failed.json().error.details.operationId;
    assert.equal(await budgetUsed(tenant.organizationId), used, 'a failed call costs nothing');
    const callsBeforeRetry = callsMentioning(m);
    const again = await withReply(m, { json: HONEST }, () => call(withKey(tenant.key,
      { method: 'POST', url: `/api/v1/proof/items/${itemId}/summarize`, headers })));
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().data.operationId, operationId);
    assert.equal(await budgetUsed(tenant.organizationId), used + 1);
    const runs = ctx.temporal.workflow.list({ query: `WorkflowId = '${aiOperationWorkflowId('summarize', operationId)}'` });
    let count = 0;
    for await (const run of runs) count += run ? 1 : 0;
    // The command relay's own start of the failed run may land after it failed (a slow relay): that stale run finds
    // the record no longer running and calls no provider, so the count of runs is 2 or 3 but the retry costs one call.
    assert.ok(count >= 2, `the failed run and the new one: ${count}`);
    assert.equal(callsMentioning(m) - callsBeforeRetry, 1, 'the retry made one provider call');

    const draftKey = keyOf('body');
    const draft = (context: string) => withReply(m, { json: { subject: 'Your story?', body: 'Would you tell others how onboarding went?' } },
      () => call(withKey(tenant.key, { method: 'POST', url: '/api/v1/proof/requests/draft', payload: { context: `${context} ${m}` }, headers: draftKey })));
    const one = await draft('first');
    // The stored answer is gone (its 24 hours passed): the key is free for another request.
    await ctx.dataSource.query(`DELETE FROM idempotency_records WHERE idempotency_key = $1`, [draftKey['idempotency-key']]);
    const other = await draft('second');
    assert.equal(one.statusCode, 200, one.body);
    assert.equal(other.statusCode, 200, other.body);
    assert.notEqual(other.json().data.operationId, one.json().data.operationId);
  });

  it('an API lost between the reservation and the start: the workflow command starts the run, which fills the record', async () => {
    const scope = { organizationId: tenant.organizationId, productId: tenant.product.id };
    const facts = await summarySource(ctx.dataSource.manager, scope, itemId, true);
    const before = callsMentioning(m);
    const ai = { maxAttempts: ctx.config.aiMaxAttempts, retryInitialMs: ctx.config.aiRetryInitialMs, timeoutMs: ctx.config.aiTimeoutMs, evaluatedModels: [] };
    const off = ctx.fakeAi.when(m, { json: HONEST });
    try {
      // The reservation commits and nothing else happens: no route starts the workflow.
      const { id } = await startOperation(ctx.dataSource, scope, { operation: 'summarize', user: sourceForModel(facts), facts },
        { proofItemIds: [itemId], versionIds: [facts.version.id] }, { type: 'service_key', id: 'key_lost' }, 1000,
        { path: 'summarize', taskQueue: ctx.config.taskQueue, ai });
      assert.deepEqual(await (await settledHandle(aiOperationWorkflowId('summarize', id))).result(), { status: 'succeeded' });
      const op = await ctx.dataSource.getRepository(ProofAiOperation).findOneByOrFail({ id });
      assert.equal(op.status, 'succeeded');
    } finally {
      off();
    }
    assert.equal(callsMentioning(m) - before, 1);
  });

  it('another tenant reusing the key gets its own operation', async () => {
    const stranger = await createProofTenant();
    const strangerItem = (await approvedItem(stranger, storyS(m))).proofItemId;
    const headers = keyOf('tenant');
    const mine = await withReply(m, { json: HONEST }, () => call(withKey(tenant.key,
      { method: 'POST', url: `/api/v1/proof/items/${itemId}/summarize`, headers })));
    const theirs = await withReply(m, { json: HONEST }, () => call(withKey(stranger.key,
      { method: 'POST', url: `/api/v1/proof/items/${strangerItem}/summarize`, headers })));
    assert.equal(mine.statusCode, 200, mine.body);
    assert.equal(theirs.statusCode, 200, theirs.body);
    assert.notEqual(theirs.json().data.operationId, mine.json().data.operationId);
    assert.equal((await call(withKey(stranger.key, { method: 'GET', url: `/api/v1/proof/ai-operations/${mine.json().data.operationId}` }))).statusCode, 404);
  });
});

describe('rooms: a compile slower than SV_AI_WAIT_MS', function () {
  this.timeout(60_000);

  it('answers 503 still_running with the document id; the run goes on and fills the document', async () => {
    const tenant = await roomsTenant();
    const app = await ctx.buildApp({ aiWaitMs: 200 });
    const room = await openRoom(tenant, 'author');
    const said = await say(tenant, 'author', room.id, 'Exports time out at 10k rows');
    const title = `Slow ${randomBytes(4).toString('hex')}`;
    const off = ctx.fakeAi.when(title, {
      json: { title, statements: [{ section: 'Problem', text: 'Exports time out on large projects.', citations: [said.id] }] }, delayMs: 1_500,
    });
    try {
      const res = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/rooms/${room.id}/compile`, payload: { title } }), app);
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(errorCode(res), 'AI_UNAVAILABLE');
      const { documentId, reason } = res.json().error.details;
      assert.equal(reason, 'still_running');
      const handle = ctx.temporal.workflow.getHandle(`room-compile/${documentId}`);
      await handle.result();
      const [doc] = await ctx.dataSource.query(`SELECT status FROM room_documents WHERE id = $1`, [documentId]);
      assert.equal(doc.status, 'compiled');
    } finally {
      off();
    }
  });
});

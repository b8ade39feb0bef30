import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { createAiActivities, validateAnalysis } from '../../activities/ai/ai-activities';
import { AI_NOT_CONFIGURED } from '../../activities/ai/openai-chat';
import { IntakeLimit, Signal } from '../../db/entities';
import { AnalysisJob } from '../../db/customer-loop/signal-analysis';
import { LOOP_SCOPES, eventually, postSignal, teammate } from '../support/customer-loop';
import { Tenant, call, createTenant } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { signalAnalysisWorkflowId } from '../../workflows/workflow-ids';

const stateOf = async (id: string) => (await ctx.dataSource.getRepository(Signal).findOneByOrFail({ id }));
const until = (id: string, state: string) => eventually(async () => {
  const s = await stateOf(id);
  return s.analysisState === state ? s : null;
});

describe('customer loop: signal analysis (real Temporal, fake AI provider)', () => {
  let tenant: Tenant;
  const marker = () => `marker-${randomBytes(6).toString('hex')}`;

  before(async () => {
    tenant = await createTenant(LOOP_SCOPES);
  });

  it('the relay starts one workflow per signal; the validated result is stored and links only offered features', async () => {
    const feature = (await call(teammate(tenant.owner, 'POST', '/api/workspace/features',
      { productId: tenant.product.id, title: 'Bulk export', problem: 'Exports are slow' }))).json().data;
    const m = marker();
    const off = ctx.fakeAi.when(m, {
      json: { sentiment: 'negative', urgency: 'high', summary: 'Exports are slow for large projects.',
        candidateFeatureIds: [feature.id, 'fea_invented000000', feature.id] },
      delayMs: 600,
    });
    try {
      const { id } = await postSignal(tenant, { body: `Exports are slow ${m}` });
      await until(id, 'analyzing');
      const done = await until(id, 'done');
      assert.equal(done.sentiment, 'negative');
      assert.equal(done.urgency, 'high');
      assert.equal(done.summary, 'Exports are slow for large projects.');
      assert.deepEqual(done.candidateFeatureIds, [feature.id]);
      assert.equal(ctx.fakeAi.requestsMentioning(m), 1);
      const handle = ctx.temporal.workflow.getHandle(signalAnalysisWorkflowId(id));
      assert.equal(await handle.result(), 'done');
      assert.deepEqual((await handle.describe()).memo, { organizationId: tenant.organizationId, productId: tenant.product.id });
      const read = (await call({ method: 'GET', url: `/api/v1/signals/${id}`, headers: { authorization: `Bearer ${tenant.key}` } })).json().data;
      assert.equal(read.analysisState, 'done');
      assert.deepEqual(read.candidateFeatureIds, [feature.id]);
    } finally {
      off();
    }
  });

  it('runs on the AI layer: the program line, and a summary with an invented number or an e-mail is dropped, the rest kept', async () => {
    for (const summary of ['Exports take 10 minutes for 500 rows.', 'Write to ada@example.com about exports.']) {
      const m = marker();
      const off = ctx.fakeAi.when(m, { json: { sentiment: 'negative', urgency: 'high', summary, candidateFeatureIds: [] } });
      try {
        const { id } = await postSignal(tenant, { body: `Exports of 500 rows take 3 minutes ${m}` });
        const done = await until(id, 'done');
        assert.equal(done.summary, null);
        assert.equal(done.sentiment, 'negative');
        assert.equal(done.urgency, 'high');
        const sent = ctx.fakeAi.requests.find((r) => r.messages.some((x) => x.content.includes(m)))!;
        assert.equal(sent.messages[0].content.split('\n')[0], 'program: signal-analysis@1.0.0');
      } finally {
        off();
      }
    }
  });

  it('a provider that keeps failing marks the signal failed after the bounded attempts, with nothing invented', async () => {
    const m = marker();
    const off = ctx.fakeAi.when(m, { status: 503 });
    try {
      const { id } = await postSignal(tenant, { body: `Broken ${m}` });
      const failed = await until(id, 'failed');
      assert.equal(failed.summary, null);
      assert.equal(failed.sentiment, null);
      assert.equal(failed.urgency, 'unknown');
      assert.match(failed.analysisError ?? '', /HTTP 503/);
      assert.equal(ctx.fakeAi.requestsMentioning(m), ctx.config.aiMaxAttempts);
      await assert.rejects(ctx.temporal.workflow.getHandle(signalAnalysisWorkflowId(id)).result(), WorkflowFailedError);
    } finally {
      off();
    }
  });

  it('an answer that fails validation is retried, then fails the analysis', async () => {
    const m = marker();
    const off = ctx.fakeAi.when(m, { json: { sentiment: 'furious', urgency: 'high', summary: 'x', candidateFeatureIds: [] } });
    try {
      const { id } = await postSignal(tenant, { body: `Odd ${m}` });
      const failed = await until(id, 'failed');
      assert.match(failed.analysisError ?? '', /validation: sentiment/);
      assert.equal(failed.summary, null);
      assert.equal(ctx.fakeAi.requestsMentioning(m), ctx.config.aiMaxAttempts);
    } finally {
      off();
    }
  });

  it('past the monthly allowance the analysis waits, and runs once the allowance returns', async () => {
    const t = await createTenant(LOOP_SCOPES);
    await ctx.dataSource.getRepository(IntakeLimit).insert({ organizationId: t.organizationId, monthlySignalAllowance: 1, dailySafetyCeiling: null });
    const first = await postSignal(t);
    const second = await postSignal(t);
    await until(first.id, 'done');
    // The relay's own decision, observed: it passed over the second signal and marked it waiting.
    await until(second.id, 'waiting');
    assert.equal((await stateOf(second.id)).analysisQueuedAt, null, 'no analysis was started for it');
    await ctx.dataSource.getRepository(IntakeLimit).update(t.organizationId, { monthlySignalAllowance: 2 });
    await until(second.id, 'done');
  });

  it('without an AI provider configured the call fails at once, non-retryable', async () => {
    const job: AnalysisJob = { signalId: 'sig_x', category: 'bug', title: 't', body: 'b', features: [] };
    const activities = createAiActivities({ config: { ...ctx.config, aiBaseUrl: undefined } });
    await assert.rejects(activities.analyzeSignal(job), (err: { type?: string; nonRetryable?: boolean }) =>
      err.type === AI_NOT_CONFIGURED && err.nonRetryable === true);
  });

  it('validation refuses malformed answers field by field', () => {
    const job: AnalysisJob = { signalId: 'sig_x', category: 'bug', title: 't', body: 'b', features: [{ id: 'fea_1', title: 'f', problem: 'p' }] };
    const ok = { sentiment: 'mixed', urgency: 'low', summary: ' fine ', candidateFeatureIds: ['fea_1', 'fea_2'] };
    assert.deepEqual(validateAnalysis(JSON.stringify(ok), job), { ...ok, summary: 'fine', candidateFeatureIds: ['fea_1'] });
    for (const bad of ['', 'not json', '[1]', JSON.stringify({ ...ok, urgency: 'now' }), JSON.stringify({ ...ok, summary: '' }),
      JSON.stringify({ ...ok, summary: 'x'.repeat(501) }), JSON.stringify({ ...ok, candidateFeatureIds: 'fea_1' })]) {
      assert.throws(() => validateAnalysis(bad, job), /failed validation/, bad);
    }
  });
});

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { FastifyInstance } from 'fastify';
import { ProofAiOperation } from '../../db/entities';
import { FakeReply } from '../support/fake-ai';
import { HONEST, budgetUsed, marker, storyS, withReply } from '../support/ai-fixtures';
import { asTeammate, call, errorCode, withKey } from '../support/fixtures';
import {
  ProofTenant, approvedItem, createProofTenant, submissionBody, submit,
} from '../support/proof-fixtures';
import { createServiceKey } from '../../db/platform/service-keys';
import { ctx } from '../support/root-hooks';
import { aiOperationWorkflowId } from '../../workflows/workflow-ids';

const summarize = (key: string, itemId: string, app: FastifyInstance = ctx.app, headers: Record<string, string> = {}) =>
  call(withKey(key, { method: 'POST', url: `/api/v1/proof/items/${itemId}/summarize`, headers }), app);

const operationCount = async (organizationId: string) =>
  ctx.dataSource.getRepository(ProofAiOperation).countBy({ organizationId });

describe('ai: proof summaries through Temporal and the fake provider (docs/ai.md#operation-records, docs/ai.md#summarize)', () => {
  let tenant: ProofTenant;
  let m: string;
  let itemId: string;
  let versionId: string;

  before(async () => {
    tenant = await createProofTenant();
    m = marker();
    const s = await approvedItem(tenant, storyS(m));
    itemId = s.proofItemId;
    versionId = s.originalVersionId;
  });

  it('an honest answer passes unchanged; the call, the workflow and the record follow the contract', async () => {
    const res = await withReply(m, { json: HONEST }, () => summarize(tenant.key, itemId));
    assert.equal(res.statusCode, 200, res.body);
    const data = res.json().data;
    assert.equal(data.summary, HONEST.sentences.map((x) => x.text).join(' '));
    assert.deepEqual(data.caveats, HONEST.caveats.map((x) => x.text));
    assert.deepEqual(data.validation, { status: 'passed', issues: [], rejected: [], added: [] });
    assert.equal(data.label, 'AI-generated summary');
    assert.equal(data.actionLevel, 'read');
    assert.equal(data.sourceVersionId, versionId);
    assert.deepEqual(data.program, { id: 'proof-summary', version: '1.0.0' });
    assert.match(data.operationId, /^aiop_/);
    // No evaluation baseline is configured: flagged for a person, never blocked.
    assert.equal(data.model.name, 'fake-model');
    assert.equal(data.model.resolved, 'fake-model');
    assert.equal(data.model.provider, new URL(ctx.config.aiBaseUrl!).host);
    assert.equal(data.model.reviewReason, 'model_unevaluated');
    assert.equal(data.needsHumanReview, true);
    assert.equal(data.reviewMessage, data.model.reviewMessage);

    const sent = ctx.fakeAi.requests.filter((r) => r.messages.some((x) => x.content.includes(m))).at(-1)!;
    assert.equal(sent.temperature, 0);
    assert.deepEqual(sent.response_format, { type: 'json_object' });
    assert.equal(sent.messages[0].role, 'system');
    assert.equal(sent.messages[0].content.split('\n')[0], 'program: proof-summary@1.0.0');
    assert.equal(JSON.parse(sent.messages[1].content).sourceVersionId, versionId);
    assert.ok(!sent.messages[1].content.includes('ada@example.com'), 'contact data is never sent to the provider');

    const handle = ctx.temporal.workflow.getHandle(aiOperationWorkflowId('summarize', data.operationId));
    assert.deepEqual(await handle.result(), { status: 'succeeded' });
    assert.deepEqual((await handle.describe()).memo, { organizationId: tenant.organizationId, productId: tenant.product.id });

    const record = await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/proof/ai-operations/${data.operationId}` }));
    assert.equal(record.statusCode, 200);
    const op = record.json().data;
    assert.equal(op.operation, 'summarize');
    assert.equal(op.status, 'succeeded');
    assert.deepEqual(op.subject, { proofItemIds: [itemId], versionIds: [versionId] });
    assert.deepEqual(op.result, data);
    assert.equal(op.failure, null);
  });

  it('drives the adversarial corpus through the provider: offending sentences are removed, the rest kept', async () => {
    const bad = ['We cut onboarding from 9 days to 3.', 'They save USD 12k a year.', 'Half the team uses it.', 'She got a $50 gift card for it.',
      'A verified customer reports faster onboarding.', 'Ada Lovelace praises support.', 'Approved for use in paid ads.'];
    const res = await withReply(m, { json: { ...HONEST, sentences: [HONEST.sentences[0], ...bad.map((text) => ({ text }))] } },
      () => summarize(tenant.key, itemId));
    assert.equal(res.statusCode, 200, res.body);
    const data = res.json().data;
    assert.equal(data.validation.status, 'revised');
    assert.deepEqual(data.validation.rejected, bad);
    assert.deepEqual([...new Set(data.validation.issues.map((i: { code: string }) => i.code))].sort(), [
      'identity_beyond_consent', 'incentive_misstated', 'invented_number', 'use_outside_consent', 'verification_overclaim',
    ]);
    assert.equal(data.summary, 'Onboarding went from nine days to two.');
    assert.equal(data.needsHumanReview, true);
    assert.match(data.reviewMessage, /^Validation changed the answer\. The model fake-model/);
  });

  it('no surviving sentence and no caveats: the labelled fixed summary with the three added caveats', async () => {
    const res = await withReply(m, { json: { sentiment: 'negative', sentences: [{ text: 'We cut onboarding from 9 days to 3.' }], caveats: [] } },
      () => summarize(tenant.key, itemId));
    const data = res.json().data;
    assert.equal(data.validation.status, 'fallback');
    assert.equal(data.summary, '[Fixed summary] Customer story (text), rated 4.5 out of 5.');
    assert.equal(data.label, 'Fixed summary, no AI text');
    assert.equal(data.sentiment, 'positive');
    assert.deepEqual(data.caveats, [
      'Incentivized: $25 gift card', 'Verification: not verified.',
      'Consent: channels website, email; display first_name; identity name; paid use not allowed; no translation; valid until 2027-06-30.',
    ]);
  });

  it('an Idempotency-Key replays the stored answer: no call, no budget', async () => {
    const headers = { 'idempotency-key': `sum-${randomBytes(6).toString('hex')}` };
    const first = await withReply(m, { json: HONEST }, () => summarize(tenant.key, itemId, ctx.app, headers));
    const calls = ctx.fakeAi.requestsMentioning(m);
    const used = await budgetUsed(tenant.organizationId);
    const again = await summarize(tenant.key, itemId, ctx.app, headers);
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    assert.equal(ctx.fakeAi.requestsMentioning(m), calls);
    assert.equal(await budgetUsed(tenant.organizationId), used);
  });

  it('the evaluation baseline: an evaluated model is not flagged; an unconfirmed one is', async () => {
    const app = await ctx.buildApp({ aiEvaluatedModels: ['fake-model'] });
    const ok = (await withReply(m, { json: HONEST }, () => summarize(tenant.key, itemId, app))).json().data;
    assert.equal(ok.model.evaluated, true);
    assert.equal(ok.model.reviewReason, null);
    assert.equal(ok.needsHumanReview, false);
    assert.equal(ok.reviewMessage, null);
    const unknown = (await withReply(m, { json: HONEST, model: null }, () => summarize(tenant.key, itemId, app))).json().data;
    assert.equal(unknown.model.resolved, null);
    assert.equal(unknown.model.reviewReason, 'resolved_model_unknown');
    assert.equal(unknown.needsHumanReview, true);
    const other = (await withReply(m, { json: HONEST, model: 'other-model' }, () => summarize(tenant.key, itemId, app))).json().data;
    assert.equal(other.model.evaluated, false);
  });

  describe('scopes pick the version', () => {
    let t: ProofTenant;
    let privateKey: string;
    let mm: string;
    let item: string;
    let original: string;

    before(async () => {
      t = await createProofTenant();
      mm = marker();
      const s = await approvedItem(t, storyS(mm));
      item = s.proofItemId;
      original = s.originalVersionId;
      const writeOnly = await createServiceKey(ctx.dataSource, {
        organizationId: t.organizationId, productId: t.product.id, environment: 'production', scopes: ['service:proof:write', 'service:proof:read'],
      });
      privateKey = t.key;
      t.key = writeOnly.secret;
    });

    it('with proof:read_private the latest version, without it the approved public one', async () => {
      const created = await call(withKey(privateKey, {
        method: 'POST', url: `/api/v1/proof/items/${item}/versions`,
        payload: { content: { text: `Onboarding took 2 days. ${mm}`, title: 'Faster onboarding' }, changeReason: 'shorter wording' },
      }));
      assert.equal(created.statusCode, 201, created.body);
      const latest = created.json().data.id;
      const answer = { json: { ...HONEST, sentences: [{ text: 'Onboarding took 2 days.' }] } };
      const withPrivate = (await withReply(mm, answer, () => summarize(privateKey, item))).json().data;
      assert.equal(withPrivate.sourceVersionId, latest);
      const publicOnly = (await withReply(mm, answer, () => summarize(t.key, item))).json().data;
      assert.equal(publicOnly.sourceVersionId, original);

      // The record of the private summary withholds its result from a key without read_private.
      const rec = (await call(withKey(t.readKey, { method: 'GET', url: `/api/v1/proof/ai-operations/${withPrivate.operationId}` }))).json().data;
      assert.equal(rec.result, null);
      assert.equal(rec.resultWithheld, true);
      const recPublic = (await call(withKey(t.readKey, { method: 'GET', url: `/api/v1/proof/ai-operations/${publicOnly.operationId}` }))).json().data;
      assert.equal(recPublic.result.summary, 'Onboarding took 2 days.');
    });

    it('an unapproved item: 422 not_approved without read_private; with it, its latest version', async () => {
      const mm2 = marker();
      const s = await submit({ ...t, key: privateKey }, storyS(mm2));
      const res = await summarize(t.key, s.proofItemId);
      assert.equal(res.statusCode, 422);
      assert.equal(errorCode(res), 'NOT_ELIGIBLE');
      assert.deepEqual(res.json().error.details, { reasons: ['not_approved'] });
      const ok = await withReply(mm2, { json: HONEST }, () => summarize(privateKey, s.proofItemId));
      assert.equal(ok.statusCode, 200);
      assert.equal(ok.json().data.sourceVersionId, s.originalVersionId);
    });
  });

  describe('refusals before AI', () => {
    it('unknown 404, another tenant 404, a story without text 422 no_text, pending revocation 422', async () => {
      assert.equal((await summarize(tenant.key, 'prf_unknown000000000')).statusCode, 404);
      const other = await createProofTenant();
      const res = await summarize(other.key, itemId);
      assert.equal(res.statusCode, 404);
      assert.equal(errorCode(res), 'NOT_FOUND');
      const s = await approvedItem(other, submissionBody({ type: 'image', content: { rating: 5, mediaAssetIds: ['med_photo00000000'] } }));
      const noText = await summarize(other.key, s.proofItemId);
      assert.equal(noText.statusCode, 422);
      assert.deepEqual(noText.json().error.details, { reasons: ['no_text'] });
      const revoke = await call(withKey(other.key, { method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/revoke` }));
      assert.equal(revoke.statusCode, 202);
      const pending = await summarize(other.key, s.proofItemId);
      assert.equal(pending.statusCode, 422);
      assert.deepEqual(pending.json().error.details.reasons, ['revocation_pending', 'no_text']);
    });

    it('deleted 409 CONFLICT, revoked 409 REVOKED_FINAL, before any call', async () => {
      const t = await createProofTenant();
      const deleted = await approvedItem(t, storyS(marker()));
      const del = await call(asTeammate(t.owner, { method: 'DELETE', url: `/api/workspace/proof/items/${deleted.proofItemId}` }));
      assert.equal(del.statusCode, 200, del.body);
      const res = await summarize(t.key, deleted.proofItemId);
      assert.equal(res.statusCode, 409);
      assert.equal(errorCode(res), 'CONFLICT');
      const revoked = await approvedItem(t, storyS(marker()));
      await ctx.dataSource.query(`UPDATE proof_items SET status = 'revoked', revoked_at = now() WHERE id = $1`, [revoked.proofItemId]);
      const res2 = await summarize(t.key, revoked.proofItemId);
      assert.equal(res2.statusCode, 409);
      assert.equal(errorCode(res2), 'REVOKED_FINAL');
      assert.equal(await operationCount(t.organizationId), 0);
    });

    it('the AI operation record of another tenant is 404', async () => {
      const res = await withReply(m, { json: HONEST }, () => summarize(tenant.key, itemId));
      const other = await createProofTenant();
      const read = await call(withKey(other.key, { method: 'GET', url: `/api/v1/proof/ai-operations/${res.json().data.operationId}` }));
      assert.equal(read.statusCode, 404);
    });

    it('summarize needs proof:write', async () => {
      const res = await summarize(tenant.readKey, itemId);
      assert.equal(res.statusCode, 403);
      assert.equal(errorCode(res), 'INSUFFICIENT_SCOPE');
    });
  });
});

describe('ai: provider outages, no provider, budget (docs/ai.md#operation-records, docs/ai.md#walk-through)', () => {
  let tenant: ProofTenant;
  let m: string;
  let itemId: string;

  before(async () => {
    tenant = await createProofTenant();
    m = marker();
    itemId = (await approvedItem(tenant, storyS(m))).proofItemId;
  });

  const outages: Array<[string, FakeReply, string]> = [
    ['HTTP 500 on every try', { status: 500 }, 'provider_error'],
    ['HTTP 429 from the provider', { status: 429 }, 'provider_error'],
    ['text around the JSON', { content: `Sure! ${JSON.stringify(HONEST)}` }, 'malformed_output'],
    ['the wrong shape', { json: { summary: 'Onboarding went from nine days to two.' } }, 'malformed_output'],
    ['an empty answer', { content: '' }, 'malformed_output'],
  ];
  for (const [what, reply, reason] of outages) {
    it(`${what}: 503 ${reason} after the configured attempts, no result, no budget used`, async () => {
      const before = { calls: ctx.fakeAi.requestsMentioning(m), used: await budgetUsed(tenant.organizationId) };
      const res = await withReply(m, reply, () => summarize(tenant.key, itemId));
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(errorCode(res), 'AI_UNAVAILABLE');
      const details = res.json().error.details;
      assert.equal(details.reason, reason);
      assert.equal(details.attempts, ctx.config.aiMaxAttempts);
      assert.equal(ctx.fakeAi.requestsMentioning(m) - before.calls, ctx.config.aiMaxAttempts);
      assert.equal(await budgetUsed(tenant.organizationId), before.used);
      const op = await ctx.dataSource.getRepository(ProofAiOperation).findOneByOrFail({ id: details.operationId });
      assert.equal(op.status, 'failed');
      assert.equal(op.result, null);
      assert.deepEqual(op.failure, { code: 'AI_UNAVAILABLE', reason, attempts: ctx.config.aiMaxAttempts });
    });
  }

  it('a 4xx refusal is not retried', async () => {
    const before = ctx.fakeAi.requestsMentioning(m);
    const res = await withReply(m, { status: 400 }, () => summarize(tenant.key, itemId));
    assert.equal(res.statusCode, 503);
    assert.equal(res.json().error.details.reason, 'refused');
    assert.equal(ctx.fakeAi.requestsMentioning(m) - before, 1);
  });

  it('slower than the timeout: 503 timeout', async function () {
    this.timeout(20_000);
    const app = await ctx.buildApp({ aiTimeoutMs: 300 });
    const used = await budgetUsed(tenant.organizationId);
    const res = await withReply(m, { json: HONEST, delayMs: 1_500 }, () => summarize(tenant.key, itemId, app));
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.json().error.details.reason, 'timeout');
    assert.equal(await budgetUsed(tenant.organizationId), used);
  });

  it('without a configured provider every AI route answers 503 not_configured at once and stores nothing', async () => {
    const app = await ctx.buildApp({ aiBaseUrl: undefined });
    const ops = await operationCount(tenant.organizationId);
    const calls = ctx.fakeAi.requests.length;
    const used = await budgetUsed(tenant.organizationId);
    const sourceItem = (await approvedItem(tenant, storyS(marker(), { channels: ['website', 'case_study'] }))).proofItemId;
    const responses = [
      await summarize(tenant.key, itemId, app),
      await call(withKey(tenant.key, { method: 'POST', url: '/api/v1/proof/requests/draft', payload: { context: 'onboarding' } }), app),
      await call(withKey(tenant.key, { method: 'POST', url: '/api/v1/proof/case-studies', payload: { proofItemIds: [sourceItem] } }), app),
    ];
    for (const res of responses) {
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(errorCode(res), 'AI_UNAVAILABLE');
      assert.deepEqual(res.json().error.details, { operationId: null, reason: 'not_configured', attempts: 0 });
    }
    // docs/ai.md#walk-through's order: the resource checks come before the configuration's 503.
    const unknown = await summarize(tenant.key, 'pi_unknown0000000000000000', app);
    assert.deepEqual([unknown.statusCode, errorCode(unknown)], [404, 'NOT_FOUND'], unknown.body);
    assert.equal(await operationCount(tenant.organizationId), ops);
    assert.equal(await budgetUsed(tenant.organizationId), used);
    assert.equal(ctx.fakeAi.requests.length, calls);
  });

  it('concurrent calls never exceed the allowance: the month counter is reserved under its row lock', async () => {
    const t = await createProofTenant();
    const mm = marker();
    const item = (await approvedItem(t, storyS(mm))).proofItemId;
    await ctx.dataSource.query(`INSERT INTO intake_limits (organization_id, ai_monthly_allowance) VALUES ($1, 2)`, [t.organizationId]);
    const codes = await withReply(mm, { json: HONEST }, () => Promise.all([1, 2, 3, 4, 5].map(() => summarize(t.key, item))));
    assert.deepEqual(codes.map((r) => r.statusCode).sort(), [200, 200, 429, 429, 429]);
    assert.equal(await budgetUsed(t.organizationId), 2);
    assert.equal(await operationCount(t.organizationId), 2);
  });

  it('a used-up allowance answers 429 with retry-after to the next month; a failed call costs nothing', async () => {
    const t = await createProofTenant();
    const mm = marker();
    const item = (await approvedItem(t, storyS(mm))).proofItemId;
    await ctx.dataSource.query(`INSERT INTO intake_limits (organization_id, ai_monthly_allowance) VALUES ($1, 1)`, [t.organizationId]);
    const failed = await withReply(mm, { status: 500 }, () => summarize(t.key, item));
    assert.equal(failed.statusCode, 503);
    const ok = await withReply(mm, { json: HONEST }, () => summarize(t.key, item));
    assert.equal(ok.statusCode, 200, ok.body);
    const ops = await operationCount(t.organizationId);
    const calls = ctx.fakeAi.requestsMentioning(mm);
    const refused = await withReply(mm, { json: HONEST }, () => summarize(t.key, item));
    assert.equal(refused.statusCode, 429);
    assert.equal(errorCode(refused), 'AI_BUDGET_EXCEEDED');
    const now = new Date();
    const resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    assert.deepEqual(refused.json().error.details, { allowance: 1, used: 1, resetsAt: resetsAt.toISOString() });
    const retryAfter = Number(refused.headers['retry-after']);
    const expected = Math.ceil((resetsAt.getTime() - now.getTime()) / 1000);
    assert.ok(retryAfter >= expected - 5 && retryAfter <= expected + 1, `retry-after ${retryAfter}, expected about ${expected}`);
    assert.equal(await operationCount(t.organizationId), ops, 'no record for a refused operation');
    assert.equal(ctx.fakeAi.requestsMentioning(mm), calls, 'no provider call');
  });
});

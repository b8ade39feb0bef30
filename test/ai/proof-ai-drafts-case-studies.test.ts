import assert from 'node:assert/strict';
import { ProofAiOperation, ProofAsset } from '../../db/entities';
import { budgetUsed, marker, storyS, withReply } from '../support/ai-fixtures';
import { asTeammate, call, errorCode, withKey } from '../support/fixtures';
import { ProofTenant, approvedItem, createProofTenant, ledgerTypes, submissionBody, submit } from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import { aiOperationWorkflowId } from '../../workflows/workflow-ids';

const draft = (key: string, payload: object) => call(withKey(key, { method: 'POST', url: '/api/v1/proof/requests/draft', payload }));
const caseStudy = (key: string, payload: object) => call(withKey(key, { method: 'POST', url: '/api/v1/proof/case-studies', payload }));

describe('ai: ask drafts (docs/ai.md#ask-draft)', () => {
  let tenant: ProofTenant;

  before(async () => {
    tenant = await createProofTenant();
  });

  it('an honest draft: 200, all five checks pass, never sent, nothing created', async () => {
    const m = marker();
    const body = { subject: 'Would you share your story?', body: 'Hi Ada, you finished onboarding in 2 days. Would you tell others how it went?' };
    const res = await withReply(m, { json: body }, () => draft(tenant.key, { recipientName: 'Ada', context: `finished onboarding in 2 days ${m}` }));
    assert.equal(res.statusCode, 200, res.body);
    const data = res.json().data;
    assert.deepEqual(data.draft, body);
    assert.equal(data.label, 'AI-generated draft, not sent');
    assert.equal(data.actionLevel, 'draft');
    assert.equal(data.requiresApproval, 'human');
    assert.deepEqual(data.program, { id: 'proof-ask-draft', version: '1.0.0' });
    assert.deepEqual(data.policyChecks.map((c: { status: string }) => c.status), ['pass', 'pass', 'pass', 'pass', 'pass']);
    assert.equal(data.needsHumanReview, true, 'no evaluation baseline: flagged');
    assert.equal(data.reviewMessage, data.model.reviewMessage);
    const handle = ctx.temporal.workflow.getHandle(aiOperationWorkflowId('ask-draft', data.operationId));
    assert.deepEqual(await handle.result(), { status: 'succeeded' });
    const sent = ctx.fakeAi.requests.find((r) => r.messages.some((x) => x.content.includes(m)))!;
    assert.equal(sent.messages[0].content.split('\n')[0], 'program: proof-ask-draft@1.0.0');
  });

  const discarded: Array<[string, object, string[]]> = [
    ['review gating', { subject: 'Quick favour', body: "If you're happy with us, please leave a review!" }, ['no_review_gating']],
    ['a sentiment-conditioned reward', { subject: 'Quick favour', body: 'Leave a positive review and get a free month.' },
      ['no_review_gating', 'no_sentiment_conditioned_reward']],
    ['an invented number', { subject: 'Quick favour', body: 'Join 10,000 customers who shared their story.' }, ['no_invented_numbers']],
  ];
  for (const [what, answer, failed] of discarded) {
    it(`${what}: 422 ASK_POLICY_FAILED, the draft neither returned nor kept, the unit still counted`, async () => {
      const m = marker();
      const used = await budgetUsed(tenant.organizationId);
      const res = await withReply(m, { json: answer }, () => draft(tenant.key, { context: `finished onboarding in 2 days ${m}` }));
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(errorCode(res), 'ASK_POLICY_FAILED');
      const details = res.json().error.details;
      assert.deepEqual(details.failed, failed);
      assert.equal(details.policyChecks.length, 5);
      assert.ok(!res.body.includes((answer as { body: string }).body), 'the discarded draft is never returned');
      const op = await ctx.dataSource.getRepository(ProofAiOperation).findOneByOrFail({ id: details.operationId });
      assert.equal(op.status, 'discarded');
      assert.equal(op.result, null);
      assert.ok(!JSON.stringify(op.failure).includes((answer as { body: string }).body), 'nor kept');
      assert.equal(await budgetUsed(tenant.organizationId), used + 1);
      const record = (await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/proof/ai-operations/${details.operationId}` }))).json().data;
      assert.equal(record.status, 'discarded');
      assert.equal(record.failure.code, 'ASK_POLICY_FAILED');
    });
  }

  it('incentive checks flag the draft for a person without discarding it', async () => {
    const m = marker();
    const missing = await withReply(m, { json: { subject: 'Your story', body: 'Would you tell us how onboarding went?' } },
      () => draft(tenant.key, { incentiveDisclosure: '$25 gift card for any honest review', context: m }));
    assert.equal(missing.statusCode, 200, missing.body);
    const data = missing.json().data;
    assert.equal(data.policyChecks[3].status, 'fail');
    assert.equal(data.needsHumanReview, true);
    assert.match(data.reviewMessage, /^Failed checks: incentive_disclosed_when_offered\./);
    const m2 = marker();
    const undisclosed = await withReply(m2, { json: { subject: 'Your story', body: "We'll send a gift card." } }, () => draft(tenant.key, { context: m2 }));
    assert.equal(undisclosed.json().data.policyChecks[4].status, 'fail');
  });

  it('the named story feeds the number pool; unknown 404, revoked 409 REVOKED_FINAL, bad body 400', async () => {
    const m = marker();
    const s = await approvedItem(tenant, storyS(m));
    const ok = await withReply(m, { json: { subject: 'Your story', body: 'You cut onboarding from 9 days to 2. Would you tell us more?' } },
      () => draft(tenant.key, { proofItemId: s.proofItemId }));
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal((await draft(tenant.key, { proofItemId: 'prf_unknown00000000' })).statusCode, 404);
    const other = await createProofTenant();
    assert.equal((await draft(other.key, { proofItemId: s.proofItemId })).statusCode, 404);
    const bad = await draft(tenant.key, { tone: 'sarcastic', extra: 1 });
    assert.equal(bad.statusCode, 400);
    assert.equal(errorCode(bad), 'VALIDATION_FAILED');
    const revokedItem = await submit(tenant, storyS(marker()));
    await ctx.dataSource.query(`UPDATE proof_items SET status = 'revoked', revoked_at = now() WHERE id = $1`, [revokedItem.proofItemId]);
    const revoked = await draft(tenant.key, { proofItemId: revokedItem.proofItemId });
    assert.equal(revoked.statusCode, 409);
    assert.equal(errorCode(revoked), 'REVOKED_FINAL');
  });
});

describe('ai: case studies (docs/ai.md#case-studies)', () => {
  let tenant: ProofTenant;
  let m: string;
  let s: { proofItemId: string; originalVersionId: string };
  let b: { proofItemId: string; originalVersionId: string };

  before(async () => {
    tenant = await createProofTenant();
    m = marker();
    s = await approvedItem(tenant, storyS(m, { channels: ['website', 'email', 'case_study'] }));
    b = await approvedItem(tenant, submissionBody({
      content: { text: 'Our NPS rose from 31 to 58.', title: 'NPS' },
      consent: { ...submissionBody().consent, channels: ['case_study'] },
    }));
  });

  it('201: a draft asset of the surviving statements, rejected ones listed with reasons, proof.asset.ready', async () => {
    const answer = {
      title: 'Faster onboarding at scale',
      sections: [{
        heading: 'Results',
        statements: [
          { text: 'Ada said "We cut onboarding from 9 days to 2".', citations: [{ sourceVersionId: s.originalVersionId,
            quote: 'We cut onboarding from 9 days to 2' }] },
          { text: 'NPS rose from 31 to 58.', citations: [{ sourceVersionId: b.originalVersionId, quote: null }] },
          { text: 'Onboarding got faster.', citations: [] },
          { text: 'Onboarding got faster.', citations: [{ sourceVersionId: 'ver_unknown', quote: null }] },
          { text: 'NPS rose to 58 and onboarding took 2 days.', citations: [{ sourceVersionId: b.originalVersionId, quote: null }] },
          { text: 'Ada said "we cut onboarding from 9 days to two".', citations: [{ sourceVersionId: s.originalVersionId,
            quote: 'we cut onboarding from 9 days to two' }] },
        ],
      }],
    };
    const res = await withReply(m, { json: answer }, () => caseStudy(tenant.key, { proofItemIds: [s.proofItemId, b.proofItemId], goal: 'Show onboarding' }));
    assert.equal(res.statusCode, 201, res.body);
    const data = res.json().data;
    assert.deepEqual(data.program, { id: 'proof-case-study', version: '1.0.0' });
    assert.equal(data.needsHumanReview, true);
    assert.match(data.reviewMessage, /approve/);
    const asset = data.asset;
    assert.equal(asset.assetType, 'case_study');
    assert.deepEqual(asset.sourceProofIds, [s.proofItemId, b.proofItemId]);
    assert.deepEqual(asset.sourceVersionIds, [s.originalVersionId, b.originalVersionId]);
    assert.equal(asset.templateId, 'challenge_solution_results');
    assert.equal(asset.approvalState, 'draft');
    assert.deepEqual(asset.channelEligibility, ['case_study']);
    assert.equal(asset.content.title, 'Faster onboarding at scale');
    assert.equal(asset.content.length, 'standard');
    assert.equal(asset.content.goal, 'Show onboarding');
    assert.deepEqual(asset.content.sections[0].statements.map((x: { text: string }) => x.text),
      [answer.sections[0].statements[0].text, answer.sections[0].statements[1].text]);
    assert.deepEqual(asset.content.customerApprovals, [{ proofItemId: s.proofItemId, state: 'pending' }, { proofItemId: b.proofItemId, state: 'pending' }]);
    assert.deepEqual(data.rejectedStatements.map((r: { location: string; reasons: string[] }) => [r.location, r.reasons]), [
      ['sections[0].statements[2]', ['uncited']],
      ['sections[0].statements[3]', ['unknown_citation']],
      ['sections[0].statements[4]', ['invented_number']],
      ['sections[0].statements[5]', ['altered_quote']],
    ]);
    assert.ok((await ledgerTypes(s.proofItemId)).includes('proof.asset.ready'));
    const read = await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/proof/assets/${asset.id}` }));
    assert.equal(read.statusCode, 200);
    // The customers have not approved their words yet: a person cannot approve the asset.
    const approve = await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/workspace/proof/assets/${asset.id}/approve` }));
    assert.equal(approve.statusCode, 409, approve.body);
    assert.equal((await ctx.dataSource.getRepository(ProofAsset).findOneByOrFail({ id: asset.id })).approvalState, 'draft');
  });

  it('the length caps the statements; a failing title becomes "Customer story"', async () => {
    const statements = Array.from({ length: 8 }, () => ({ text: 'Support answers within four hours.',
      citations: [{ sourceVersionId: s.originalVersionId, quote: null }] }));
    const res = await withReply(m, { json: { title: 'Onboarding in 1 day', sections: [{ heading: 'Support', statements }] } },
      () => caseStudy(tenant.key, { proofItemIds: [s.proofItemId], length: 'short', template: 'quote_led' }));
    assert.equal(res.statusCode, 201, res.body);
    const data = res.json().data;
    assert.equal(data.asset.content.title, 'Customer story');
    assert.equal(data.asset.content.sections[0].statements.length, 6);
    assert.deepEqual(data.rejectedStatements.map((r: { reasons: string[] }) => r.reasons), [['over_length'], ['over_length']]);
    assert.equal(data.asset.templateId, 'quote_led');
  });

  it('nothing survives: 422 CITATION_VALIDATION_FAILED, no asset', async () => {
    const assets = await ctx.dataSource.getRepository(ProofAsset).countBy({ organizationId: tenant.organizationId });
    const answer = { title: 'NPS', sections: [{ heading: 'Results', statements: [
      { text: 'Ada said "we cut onboarding from 9 days to two".', citations: [{ sourceVersionId: s.originalVersionId,
        quote: 'we cut onboarding from 9 days to two' }] },
      { text: '"Our NPS rose from 31 to 58."', citations: [{ sourceVersionId: s.originalVersionId, quote: null }] },
    ] }] };
    const res = await withReply(m, { json: answer }, () => caseStudy(tenant.key, { proofItemIds: [s.proofItemId] }));
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(errorCode(res), 'CITATION_VALIDATION_FAILED');
    const details = res.json().error.details;
    assert.match(details.operationId, /^aiop_/);
    assert.deepEqual(details.rejectedStatements.map((r: { reasons: string[] }) => [...r.reasons].sort()),
      [['altered_quote'], ['altered_quote', 'invented_number']]);
    assert.equal(await ctx.dataSource.getRepository(ProofAsset).countBy({ organizationId: tenant.organizationId }), assets);
  });

  it('refusals before AI: duplicates 400, unknown ids 404 together, ineligible sources 422 together, scope', async () => {
    const dup = await caseStudy(tenant.key, { proofItemIds: [s.proofItemId, s.proofItemId] });
    assert.equal(dup.statusCode, 400);
    assert.equal((await caseStudy(tenant.key, { proofItemIds: [] })).statusCode, 400);
    assert.equal((await caseStudy(tenant.key, { proofItemIds: [s.proofItemId], length: 'epic' })).statusCode, 400);
    const unknown = await caseStudy(tenant.key, { proofItemIds: [s.proofItemId, 'prf_nope0000000000', 'prf_nope1111111111'] });
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(unknown.json().error.details, { proofItemIds: ['prf_nope0000000000', 'prf_nope1111111111'] });
    const other = await createProofTenant();
    assert.equal((await caseStudy(other.key, { proofItemIds: [s.proofItemId] })).statusCode, 404);
    const websiteOnly = await approvedItem(tenant, storyS(marker()));
    const unapproved = await submit(tenant, storyS(marker(), { channels: ['case_study'] }));
    const refused = await caseStudy(tenant.key, { proofItemIds: [s.proofItemId, websiteOnly.proofItemId, unapproved.proofItemId] });
    assert.equal(refused.statusCode, 422);
    assert.equal(errorCode(refused), 'NOT_ELIGIBLE');
    const items = refused.json().error.details.items as Array<{ proofItemId: string; reasons: string[] }>;
    assert.deepEqual(items.map((i) => i.proofItemId), [websiteOnly.proofItemId, unapproved.proofItemId]);
    assert.ok(items[0].reasons.includes('channel_not_consented'));
    assert.ok(items[1].reasons.includes('not_approved'));
    assert.equal((await caseStudy(tenant.readKey, { proofItemIds: [s.proofItemId] })).statusCode, 403);
  });
});

import { array, boolean, mixed, number, object, string } from 'yup';
import { caseStudySources, askSource, sourceForModel, summarySource } from '../../db/ai/ai-sources';
import { findOperation, viewOperation } from '../../db/ai/ai-operations';
import { AI_OPERATIONS } from '../../db/entities/proof-ai-operation';
import { SENTIMENT_VALUES } from '../../db/rules/ai-summary-validator';
import { POLICY_CHECKS } from '../../db/rules/ai-ask-policy';
import { CASE_STUDY_LENGTHS } from '../../db/rules/ai-case-study-validator';
import { validationFailed } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { idParams } from '../plugins/path-params';
import { productTenant } from '../plugins/product-tenant';
import { dataOf, errorOf, timestamp } from '../plugins/responses';
import { RouteApp, strictObject } from '../plugins/validation';
import { canReadPrivate, runAiOperation } from './ai-runner';
import { PROOF_API_ROUTE } from '../plugins/route-traits';

export const CASE_STUDY_TEMPLATES = ['challenge_solution_results', 'before_after', 'quote_led'] as const;

const program = object({ id: string().required(), version: string().required() });
export const modelSchema = object({
  provider: string().required(),
  name: string().required(),
  resolved: string().nullable().defined(),
  evaluated: boolean().required(),
  needsHumanReview: boolean().required(),
  reviewReason: string().oneOf(['model_unevaluated', 'resolved_model_unknown'] as const).nullable().defined(),
  reviewMessage: string().nullable().defined(),
});

const issue = object({ location: string().required(), code: string().required(), detail: string().required(), text: string().required() });
export const summarySchema = object({
  summary: string().required(),
  sentiment: string().oneOf([...SENTIMENT_VALUES]).required(),
  caveats: array(string().defined()).defined(),
  sourceVersionId: string().required(),
  label: string().required(),
  actionLevel: string().oneOf(['read'] as const).required(),
  validation: object({
    status: string().oneOf(['passed', 'revised', 'fallback'] as const).required(),
    issues: array(issue).defined(),
    rejected: array(string().defined()).defined(),
    added: array(string().defined()).defined(),
  }).required(),
  needsHumanReview: boolean().required(),
  reviewMessage: string().nullable().defined(),
  program: program.required(),
  model: modelSchema.required(),
  operationId: string().required(),
});

const policyCheck = object({ name: string().oneOf([...POLICY_CHECKS]).required(), status: string().oneOf(['pass', 'fail'] as const).required() });
export const askDraftSchema = object({
  draft: object({ subject: string().required(), body: string().required() }).required(),
  label: string().required(),
  actionLevel: string().oneOf(['draft'] as const).required(),
  requiresApproval: string().required(),
  needsHumanReview: boolean().required(),
  reviewMessage: string().nullable().defined(),
  policyChecks: array(policyCheck).defined(),
  program: program.required(),
  model: modelSchema.required(),
  operationId: string().required(),
});

const citation = object({ sourceVersionId: string().required(), quote: string().nullable().defined() });
const rejectedStatement = object({
  location: string().required(), text: string().required(), citations: array(citation).defined(), reasons: array(string().defined()).defined(),
});
const caseStudyAsset = object({
  id: string().required(),
  assetType: string().oneOf(['case_study'] as const).required(),
  sourceProofIds: array(string().defined()).defined(),
  sourceVersionIds: array(string().defined()).defined(),
  templateId: string().nullable().defined(),
  brandKitVersion: string().nullable().defined(),
  approvalState: string().required(),
  channelEligibility: array(string().defined()).defined(),
  files: array(string().defined()).defined(),
  content: object({
    title: string().required(),
    sections: array(object({ heading: string().required(), statements: array(object({ text: string().required(), citations: array(citation).defined() }))
      .defined() })).defined(),
    length: string().required(),
    goal: string().nullable().defined(),
    customerApprovals: array(object({ proofItemId: string().required(), state: string().required() })).defined(),
    mediaType: string().required(),
  }).required(),
  createdAt: timestamp().required(),
});
export const caseStudySchema = object({
  asset: caseStudyAsset.required(),
  rejectedStatements: array(rejectedStatement).defined(),
  program: program.required(),
  model: modelSchema.required(),
  operationId: string().required(),
  needsHumanReview: boolean().required(),
  reviewMessage: string().nullable().defined(),
});

export const aiOperationSchema = object({
  id: string().required(),
  operation: string().oneOf([...AI_OPERATIONS]).required(),
  status: string().oneOf(['running', 'succeeded', 'discarded', 'failed'] as const).required(),
  program: program.required(),
  model: modelSchema.nullable().defined(),
  subject: object({ proofItemIds: array(string().defined()).defined(), versionIds: array(string().defined()).defined() }).required(),
  result: mixed().nullable().defined().meta({ description: 'the data the operation answered; null until it succeeded, or without proof:read_private for a ' +
    'non-public source' }),
  resultWithheld: boolean().required(),
  failure: object({ code: string().required(), reason: string().required(), attempts: number() }).nullable().defined(),
  createdAt: timestamp().required(),
  updatedAt: timestamp().required(),
  completedAt: timestamp().nullable().defined(),
});

const askDraftBody = strictObject({
  proofItemId: string().max(100),
  recipientName: string().max(200),
  context: string().max(2000),
  incentiveDisclosure: string().max(500),
  channel: string().oneOf(['email', 'in_app', 'link', 'room'] as const),
  tone: string().oneOf(['warm', 'brief', 'formal'] as const),
}).default({});

const caseStudyBody = strictObject({
  proofItemIds: array(string().required().max(100)).required().min(1).max(10),
  template: string().oneOf([...CASE_STUDY_TEMPLATES]),
  length: string().oneOf(Object.keys(CASE_STUDY_LENGTHS) as (keyof typeof CASE_STUDY_LENGTHS)[]),
  goal: string().max(500),
}).required();

const write = { auth: 'key' as const, scope: 'service:proof:write', idempotency: 'optional' as const };

/** The proof AI operations (docs/ai.md#summarize, docs/ai.md#ask-draft, docs/ai.md#case-studies) and their records (docs/ai.md#operation-records). */
export async function proofAiRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;

  app.post('/api/v1/proof/items/:id/summarize', {
    schema: { params: idParams, response: { 200: dataOf(summarySchema),
      422: errorOf('NOT_ELIGIBLE: the item cannot be summarized (not approved without proof:read_private, no text, a pending revocation)') } },
    config: {
      tag: 'ai', ...PROOF_API_ROUTE,
      ...write, operationId: 'summarizeProofItem',
      summary: 'AI summary of one story, validated so it never states what the story does not; 503 AI_UNAVAILABLE, 429 AI_BUDGET_EXCEEDED',
    },
  }, async (request) => {
    const facts = await summarySource(ds.manager, productTenant(request), request.params.id, canReadPrivate(request));
    const data = await runAiOperation(deps, request, { operation: 'summarize', user: sourceForModel(facts), facts },
      { proofItemIds: [request.params.id], versionIds: [facts.version.id] });
    return { data };
  });

  app.post('/api/v1/proof/requests/draft', {
    schema: {
      body: askDraftBody,
      response: { 200: dataOf(askDraftSchema), 404: errorOf('NOT_FOUND: no such proof item'),
        422: errorOf('NOT_ELIGIBLE: the item cannot be the subject of a request') },
    },
    config: {
      tag: 'ai', ...PROOF_API_ROUTE,
      ...write, operationId: 'draftProofRequest',
      summary: 'AI draft of a story request; never sent; a draft failing the ask policy is discarded with 422 ASK_POLICY_FAILED',
    },
  }, async (request) => {
    const body = request.body ?? {};
    const source = body.proofItemId ? await askSource(ds.manager, productTenant(request), body.proofItemId, canReadPrivate(request)) : null;
    const facts = { recipientName: body.recipientName, context: body.context, incentiveDisclosure: body.incentiveDisclosure, version: source?.version ?? null };
    const user = {
      recipientName: body.recipientName ?? null, context: body.context ?? null, incentiveDisclosure: body.incentiveDisclosure ?? null,
      channel: body.channel ?? 'email', tone: body.tone ?? 'warm', story: source ? sourceForModel(source) : null,
    };
    const data = await runAiOperation(deps, request, { operation: 'ask_draft', user, facts },
      { proofItemIds: body.proofItemId ? [body.proofItemId] : [], versionIds: source ? [source.version.id] : [] });
    return { data };
  });

  app.post('/api/v1/proof/case-studies', {
    schema: {
      body: caseStudyBody,
      response: {
        201: dataOf(caseStudySchema),
        404: errorOf('NOT_FOUND: unknown source items (all named in details)'),
        422: errorOf('NOT_ELIGIBLE (ineligible sources, named together) or CITATION_VALIDATION_FAILED (no statement survived)'),
      },
    },
    config: {
      tag: 'ai', ...PROOF_API_ROUTE,
      ...write, operationId: 'compileCaseStudy',
      summary: 'AI case study from approved stories: cited statements and exact quotes only; a draft asset needing a person and each customer',
    },
  }, async (request, reply) => {
    const body = request.body;
    if (new Set(body.proofItemIds).size !== body.proofItemIds.length) {
      throw validationFailed([{ path: 'proofItemIds', message: 'must not repeat an id' }]);
    }
    const sources = await caseStudySources(ds.manager, productTenant(request), body.proofItemIds);
    const length = body.length ?? 'standard';
    const template = body.template ?? 'challenge_solution_results';
    const data = await runAiOperation(deps, request, {
      operation: 'case_study',
      user: { template, length, statements: CASE_STUDY_LENGTHS[length], goal: body.goal ?? null, sources: sources.map(sourceForModel) },
      facts: { sources, proofItemIds: body.proofItemIds, template, length, max: CASE_STUDY_LENGTHS[length], goal: body.goal ?? null },
    }, { proofItemIds: body.proofItemIds, versionIds: sources.map((s) => s.version.id) });
    return reply.code(201).send({ data });
  });

  app.get('/api/v1/proof/ai-operations/:id', {
    schema: { params: idParams, response: { 200: dataOf(aiOperationSchema) } },
    config: {
      tag: 'ai', ...PROOF_API_ROUTE,
      auth: 'key', scope: 'service:proof:read', operationId: 'getAiOperation',
      summary: 'One AI operation record; its result needs proof:read_private when a source version is not approved public',
    },
  }, async (request) => {
    const op = await findOperation(ds, productTenant(request), request.params.id);
    return { data: await viewOperation(ds, op, canReadPrivate(request)) };
  });
}

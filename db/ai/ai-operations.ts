import { createHash } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { ErrorCode, ServiceError, notFound } from '../../runtime/service-error';
import { ProofAiOperation, ProofAsset, ProofItem } from '../entities';
import { AiOperationKind } from '../entities/proof-ai-operation';
import { Actor, appendProofEvent } from '../proof/proof-ledger';
import { viewAsset } from '../proof/proof-assets';
import { canonicalJson } from '../rules/canonical-json';
import { AI_PROGRAMS, ModelInfo } from '../rules/ai-answers';
import { SourceFacts } from '../rules/ai-validator';
import { SummaryAnswer, validateSummary } from '../rules/ai-summary-validator';
import { AskFacts, DISCARDING_CHECKS, askPolicyChecks } from '../rules/ai-ask-policy';
import { CaseStudyAnswer, validateCaseStudy } from '../rules/ai-case-study-validator';
import { base32, newId } from '../rules/ids';
import { WorkflowCommandBody, enqueueWorkflowCommand } from '../workflow-commands';
import { dbNow } from '../clock';

type Scope = { organizationId: string; productId: string };

/** What the run of an operation needs besides its id: the workflow path, the task queue, the provider settings. */
export type AiRunCommand = Omit<Extract<WorkflowCommandBody, { type: 'proof.ai_operation.start' }>, 'type' | 'tenant' | 'operationId'>;

/** What the API hands the workflow's completion step, kept on the record (never answered). */
export type OperationInput =
  | { operation: 'summarize'; user: object; facts: SourceFacts }
  | { operation: 'ask_draft'; user: object; facts: AskFacts }
  | { operation: 'case_study'; user: object; facts: { sources: SourceFacts[]; proofItemIds: string[]; template: string; length: string; max: number;
    goal: string | null; }; };

/** `ai:YYYY-MM` of a UTC month, and when it ends. */
export function budgetMonth(now = new Date()) {
  const resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { period: `ai:${now.toISOString().slice(0, 7)}`, resetsAt };
}

export const aiUnavailable = (operationId: string | null, reason: string, attempts: number) =>
  new ServiceError('AI_UNAVAILABLE', 'the AI provider could not produce an answer; nothing was generated in its place', { operationId, reason, attempts });

/**
 * The operation id of an idempotent request: the same tenant, credential, Idempotency-Key and request
 * always name the same operation (and so the same workflow), so a retry whose answer was lost finds the
 * run it started instead of paying for a second one.
 */
export function idempotentOperationId(scope: Scope, claim: { credentialId: string; key: string; requestHash: string }): string {
  return `aiop_${base32(createHash('sha256').update(JSON.stringify([scope.organizationId, scope.productId, claim.credentialId, claim.key, claim.requestHash])).digest().subarray(0, 26))}`;
}

/**
 * Reserves one unit of the organization's monthly AI allowance under the month counter's row lock and
 * records the running operation in the same transaction. Used up: 429 AI_BUDGET_EXCEEDED, no record.
 * With a derived `id` already on record (a retry) nothing is reserved unless that run failed, which
 * a retry may run again (a failure gave its unit back, `rerun`).
 * A reservation writes the workflow command that starts its run, so an API lost after the commit leaves
 * no operation without one (the API starts the same run at once and waits for it).
 */
export async function startOperation(
  ds: DataSource, scope: Scope, input: OperationInput, subject: { proofItemIds: string[]; versionIds: string[] },
  createdBy: Actor, defaultAllowance: number, run: AiRunCommand, derivedId?: string, now = new Date(),
): Promise<{ id: string; rerun: boolean }> {
  const { period, resetsAt } = budgetMonth(now);
  return ds.transaction(async (em) => {
    let previous: { status: string } | undefined;
    if (derivedId) {
      // Two retries of one key at once: the second waits here and then sees the first's record.
      await em.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [derivedId]);
      [previous] = await em.query(`SELECT status FROM proof_ai_operations WHERE id = $1`, [derivedId]);
      if (previous && previous.status !== 'failed') return { id: derivedId, rerun: false };
    }
    const [limit]: Array<{ allowance: number }> = await em.query(
      `SELECT COALESCE((SELECT ai_monthly_allowance FROM intake_limits WHERE organization_id = $1), $2)::int AS allowance`,
      [scope.organizationId, defaultAllowance],
    );
    const granted: unknown[] = await em.query(
      `INSERT INTO intake_counters AS c (organization_id, period, count) SELECT $1, $2, 1 WHERE $3 > 0
       ON CONFLICT (organization_id, period) DO UPDATE SET count = c.count + 1 WHERE c.count < $3
       RETURNING count`,
      [scope.organizationId, period, limit.allowance],
    );
    if (granted.length === 0) {
      const [row]: Array<{ count: number }> = await em.query(
        `SELECT count FROM intake_counters WHERE organization_id = $1 AND period = $2`, [scope.organizationId, period]);
      const retryAfter = Math.max(1, Math.ceil((resetsAt.getTime() - now.getTime()) / 1000));
      throw new ServiceError('AI_BUDGET_EXCEEDED', 'the monthly AI allowance of this workspace is used up',
        { allowance: limit.allowance, used: row?.count ?? 0, resetsAt: resetsAt.toISOString() }, { 'retry-after': String(retryAfter) });
    }
    const id = derivedId ?? newId('aiop');
    const record = {
      status: 'running', model: null, subject, input, result: null, failure: null, budgetPeriod: period, createdBy, updatedAt: dbNow, completedAt: null,
    } as const;
    if (previous) {
      await em.getRepository(ProofAiOperation).update(id, record);
    } else {
      await em.getRepository(ProofAiOperation).insert({
        id, organizationId: scope.organizationId, productId: scope.productId, operation: input.operation, program: AI_PROGRAMS[input.operation], ...record,
      });
    }
    await enqueueWorkflowCommand(em, { type: 'proof.ai_operation.start', tenant: scope, operationId: id, ...run });
    return { id, rerun: previous !== undefined };
  });
}

/** The provider gave no usable answer: the record fails and its budget unit is given back (once). */
export async function failOperation(ds: DataSource, id: string, failure: { code: ErrorCode; reason: string; attempts: number }): Promise<void> {
  await ds.transaction(async (em) => {
    // An UPDATE answers [rows, affected count] through TypeORM.
    const [rows]: [Array<{ organization_id: string; budget_period: string | null }>, number] = await em.query(
      `UPDATE proof_ai_operations SET status = 'failed', failure = $2, updated_at = now(), completed_at = now()
        WHERE id = $1 AND status = 'running' RETURNING organization_id, budget_period`,
      [id, JSON.stringify(failure)],
    );
    const row = rows[0];
    if (row?.budget_period) {
      await em.query(`UPDATE intake_counters SET count = count - 1 WHERE organization_id = $1 AND period = $2 AND count > 0`,
        [row.organization_id, row.budget_period]);
    }
  });
}

const joinMessages = (...parts: Array<string | null>) => parts.filter(Boolean).join(' ') || null;

function summaryResult(op: ProofAiOperation, answer: SummaryAnswer, facts: SourceFacts, model: ModelInfo) {
  const v = validateSummary(answer, facts);
  const changed = v.validation.status !== 'passed';
  return {
    summary: v.summary, sentiment: v.sentiment, caveats: v.caveats, sourceVersionId: facts.version.id, label: v.label,
    actionLevel: 'read', validation: v.validation,
    needsHumanReview: model.needsHumanReview || changed,
    reviewMessage: joinMessages(changed ? 'Validation changed the answer.' : null, model.reviewMessage),
    program: op.program, model, operationId: op.id,
  };
}

/** The case-study asset, its ledger row and proof.asset.ready, in the completing transaction. */
async function createCaseStudyAsset(
  em: EntityManager, op: ProofAiOperation, facts: Extract<OperationInput, { operation: 'case_study' }>['facts'],
  content: { title: string; sections: CaseStudyAnswer['sections'] },
) {
  const id = newId('ast');
  const body = {
    title: content.title, sections: content.sections, length: facts.length, goal: facts.goal,
    customerApprovals: facts.proofItemIds.map((proofItemId) => ({ proofItemId, state: 'pending' })),
  };
  const sourceVersionIds = facts.proofItemIds.map((itemId) => op.subject.versionIds[op.subject.proofItemIds.indexOf(itemId)]);
  await em.getRepository(ProofAsset).insert({
    id, organizationId: op.organizationId, productId: op.productId, assetType: 'case_study',
    sourceProofIds: facts.proofItemIds, sourceVersionIds, templateId: facts.template, brandKitVersion: null,
    approvalState: 'draft', channelEligibility: ['case_study'], files: ['case-study.json'], content: body,
    mediaType: 'application/json', body: Buffer.from(canonicalJson(body), 'utf8'),
  });
  await appendProofEvent(em, {
    organizationId: op.organizationId, productId: op.productId, proofItemId: facts.proofItemIds[0], assetId: id,
    actor: { type: op.createdBy.type as Actor['type'], id: op.createdBy.id },
    eventType: 'proof.asset.ready', properties: { assetType: 'case_study', sourceVersionIds },
  });
  return viewAsset(await em.getRepository(ProofAsset).findOneByOrFail({ id }));
}

/**
 * Validates the provider's answer (docs/ai.md#the-validator, docs/ai.md#ask-draft, docs/ai.md#case-studies) and records the outcome: succeeded with the
 * answered data, or discarded when the policy or the citations leave nothing to show. Only a
 * running operation completes, so a retried activity changes nothing twice.
 */
export async function completeOperation(ds: DataSource, id: string, answer: unknown, model: ModelInfo): Promise<string> {
  return ds.transaction(async (em) => {
    const op = await em.getRepository(ProofAiOperation).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
    if (!op) throw new Error(`AI operation ${id} is missing`);
    if (op.status !== 'running') return op.status;
    const input = op.input as unknown as OperationInput;
    let status: 'succeeded' | 'discarded' = 'succeeded';
    let result: object | null = null;
    let failure: ProofAiOperation['failure'] = null;
    if (input.operation === 'summarize') {
      result = summaryResult(op, answer as SummaryAnswer, input.facts, model);
    } else if (input.operation === 'ask_draft') {
      const draft = answer as { subject: string; body: string };
      const policyChecks = askPolicyChecks(draft, input.facts);
      const failed = policyChecks.filter((c) => c.status === 'fail').map((c) => c.name);
      if (failed.some((name) => DISCARDING_CHECKS.includes(name))) {
        status = 'discarded';
        failure = { code: 'ASK_POLICY_FAILED', reason: 'policy_failed', details: { policyChecks, failed } };
      } else {
        result = {
          draft, label: 'AI-generated draft, not sent', actionLevel: 'draft', requiresApproval: 'human',
          needsHumanReview: model.needsHumanReview || failed.length > 0,
          reviewMessage: joinMessages(failed.length > 0 ? `Failed checks: ${failed.join(', ')}.` : null, model.reviewMessage),
          policyChecks, program: op.program, model, operationId: op.id,
        };
      }
    } else {
      const v = validateCaseStudy(answer as CaseStudyAnswer, input.facts.sources, input.facts.max);
      if (v.survivors === 0) {
        status = 'discarded';
        failure = { code: 'CITATION_VALIDATION_FAILED', reason: 'no_statement_survived', details: { rejectedStatements: v.rejectedStatements } };
      } else {
        const asset = await createCaseStudyAsset(em, op, input.facts, v);
        result = {
          asset, rejectedStatements: v.rejectedStatements, program: op.program, model, operationId: op.id, needsHumanReview: true,
          reviewMessage: joinMessages('A person and each quoted customer must approve this case study before it is used.', model.reviewMessage),
        };
      }
    }
    await em.getRepository(ProofAiOperation).update(id, {
      status, result, failure, model, updatedAt: dbNow, completedAt: dbNow,
    });
    return status;
  });
}

export async function findOperation(ds: DataSource, scope: Scope, id: string): Promise<ProofAiOperation> {
  const op = await ds.getRepository(ProofAiOperation).findOneBy({ id, organizationId: scope.organizationId, productId: scope.productId });
  if (!op) throw notFound('AI operation');
  return op;
}

/** The record as `GET …/ai-operations/{id}` answers it; `result` only when the key may read every subject version. */
export async function viewOperation(ds: DataSource, op: ProofAiOperation, readPrivate: boolean) {
  let resultVisible = readPrivate || op.subject.versionIds.length === 0;
  if (!resultVisible) {
    const items = await ds.getRepository(ProofItem).findBy(op.subject.proofItemIds.map((id) => ({ id })));
    const publicIds = new Set(items.filter((i) => i.status !== 'revoked').map((i) => i.approvedPublicVersionId));
    resultVisible = op.subject.versionIds.every((v) => publicIds.has(v));
  }
  return {
    id: op.id,
    operation: op.operation as AiOperationKind,
    status: op.status,
    program: op.program,
    model: op.model,
    subject: op.subject,
    result: resultVisible ? op.result : null,
    resultWithheld: !resultVisible && op.result !== null,
    failure: op.failure ? { code: op.failure.code, reason: op.failure.reason, ...(op.failure.attempts !== undefined ? { attempts: op.failure.attempts } : {}) }
    : null,
    createdAt: op.createdAt.toISOString(),
    updatedAt: op.updatedAt.toISOString(),
    completedAt: op.completedAt?.toISOString() ?? null,
  };
}

import { DataSource, EntityManager } from 'typeorm';
import { ServiceError } from '../../runtime/service-error';
import { ProofItem, ProofVersion } from '../entities';
import { ProofType } from '../entities/proof-item';
import { ProofContent } from '../entities/proof-version';
import { secondsToNextUtcDay } from '../rules/date-time';
import { newId } from '../rules/ids';
import { consentedAttribution } from '../rules/source-attribution';
import { recordSource } from '../integrations/sources';
import { ConsentTerms, recordGrant } from './proof-consent';
import { contentHash } from './proof-items';
import { Actor, appendProofEvent } from './proof-ledger';

export interface SubmissionBody {
  type: ProofType;
  content: ProofContent;
  customer?: { personRef?: string; email?: string; name?: string };
  consent: ConsentTerms;
  incentive?: { offered: boolean; description?: string };
  verification?: { state: string };
}

/**
 * The daily safety ceiling over every customer submission of the workspace (submit, nojs, v1): past
 * it, 429 with retry-after at the next UTC day. The only refusal of a submission (docs/collection.md#endpoints-customers).
 */
export async function checkDailyCeiling(em: EntityManager, organizationId: string, ceiling: number, kept = 'your draft is kept'): Promise<void> {
  const [{ n }] = await em.query(
    `SELECT count(*)::int AS n FROM proof_items
      WHERE organization_id = $1 AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`, [organizationId]);
  if (n < ceiling) return;
  throw new ServiceError('INTAKE_SAFETY_CEILING', `the workspace reached its daily safety ceiling of ${ceiling} submissions; ${kept}`,
    null, { 'retry-after': String(secondsToNextUtcDay()) });
}

export interface SubmissionContext {
  organizationId: string;
  productId: string;
  keyId: string;
  ip: string;
  monthlyAllowance: number;
  dailyCeiling: number;
}

/**
 * Stores a customer's submission: the item, its immutable original and the consent grant, always.
 * A used-up monthly allowance only flags the item (costly processing waits); it never refuses.
 */
export async function submitProof(
  ds: DataSource, ctx: SubmissionContext, body: SubmissionBody,
  /** Runs last inside the transaction: the idempotency record commits together with the item. */
  finish?: (em: EntityManager, result: SubmissionResult) => Promise<void>,
): Promise<SubmissionResult> {
  return ds.transaction(async (em) => {
    await checkDailyCeiling(em, ctx.organizationId, ctx.dailyCeiling, 'nothing was stored; retry with the same Idempotency-Key after the next UTC day');
    // `now` is the database clock's, read with the count: the item's stamps.
    const [{ n, now }]: Array<{ n: number; now: Date }> = await em.query(
      `SELECT count(*)::int AS n, now() AS now FROM proof_items
        WHERE product_id = $1 AND created_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`,
      [ctx.productId],
    );
    const overLimitReasons = n >= ctx.monthlyAllowance ? ['monthly_submission_allowance_used_up'] : [];
    const itemId = newId('prf');
    const versionId = newId('pver');
    const actor: Actor = { type: 'service_key', id: ctx.keyId };
    await em.getRepository(ProofItem).insert({
      id: itemId,
      organizationId: ctx.organizationId,
      productId: ctx.productId,
      submissionId: newId('sub'),
      type: body.type,
      status: 'submitted',
      statusReason: null,
      statusBeforeDelete: null,
      customerPersonId: body.customer?.personRef ?? null,
      customerEmail: body.customer?.email ?? null,
      customerName: body.customer?.name ?? null,
      originalVersionId: versionId,
      approvedPublicVersionId: null,
      overLimit: overLimitReasons.length > 0,
      overLimitReasons,
      incentive: body.incentive ?? { offered: false },
      verificationState: body.verification?.state ?? 'unverified',
      renderHold: false,
      createdByKeyId: ctx.keyId,
      updatedAt: now,
    });
    const hash = contentHash(body.content);
    const versions = em.getRepository(ProofVersion);
    await versions.save(versions.create({
      id: versionId,
      proofItemId: itemId,
      versionNumber: 1,
      isOriginal: true,
      content: body.content,
      contentHash: hash,
      createdByType: 'customer',
      createdById: body.customer?.personRef ?? null,
      modelId: null,
      changeReason: null,
      parentVersionId: null,
      locale: null,
      semanticDiff: {},
      approvalState: 'draft',
    }));
    const item = await em.getRepository(ProofItem).findOneByOrFail({ id: itemId });
    await appendProofEvent(em, {
      organizationId: ctx.organizationId, productId: ctx.productId, proofItemId: itemId, actor,
      eventType: 'proof.response.submitted', properties: { itemType: body.type, versionId, overLimit: item.overLimit },
    });
    await recordSource(em, {
      organizationId: ctx.organizationId, productId: ctx.productId, system: 'proof_submission', externalId: itemId,
      kind: body.type === 'review' ? 'review' : 'testimonial', capturedAt: now, capturedText: body.content.text ?? null,
      title: body.content.title ?? null, attribution: consentedAttribution(body.content.attribution, body.consent),
      links: { proofItemId: itemId, versionId }, reuse: 'allowed_with_consent', actor, ref: versionId,
    });
    const grantId = await recordGrant(ds, em, {
      item, versionId, contentHash: hash, terms: body.consent, actor,
      evidence: { capturedVia: 'api_submission', keyId: ctx.keyId, ip: ctx.ip, at: now.toISOString() },
    });
    const result: SubmissionResult = {
      submissionId: item.submissionId,
      proofItemId: itemId,
      originalVersionId: versionId,
      consentGrantId: grantId,
      overLimit: item.overLimit,
      overLimitReasons: item.overLimitReasons,
    };
    await finish?.(em, result);
    return result;
  });
}

export interface SubmissionResult {
  submissionId: string;
  proofItemId: string;
  originalVersionId: string;
  consentGrantId: string;
  overLimit: boolean;
  overLimitReasons: string[];
}

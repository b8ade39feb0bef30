import { DataSource } from 'typeorm';
import { conflict, notFound, validationFailed } from '../../runtime/service-error';
import { ProofItem, ProofRequest, ProofVersion } from '../entities';
import { Actor, appendProofEvent } from '../proof/proof-ledger';
import { contentHash } from '../proof/proof-items';
import { newId } from '../rules/ids';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { pinnedFlow } from './pinned-flow';
import { dbNow } from '../clock';

export interface CapturedReply {
  request: ProofRequest;
  proofItemId: string;
  versionId: string;
}

// A reply may carry a clock a little ahead of ours; further ahead is a typing error.
const CLOCK_SKEW_MS = 5 * 60_000;

/**
 * A customer's e-mail reply to a sent request, captured by a teammate (docs/ai.md#requests-and-reply-capture): a `submitted` item
 * whose original is the reply, with no consent grant, so it renders nowhere until the customer grants
 * one; the request becomes `responded`; `proof.reply.captured`. The request's workflow hears of it
 * through the outbox in the same transaction.
 */
export async function captureReply(
  ds: DataSource, who: { organizationId: string; teammateId: string }, requestId: string, body: { text: string; receivedAt: string },
): Promise<CapturedReply> {
  const receivedAt = new Date(body.receivedAt);
  return ds.transaction(async (em) => {
    const request = await em.getRepository(ProofRequest).findOne({
      where: { id: requestId, organizationId: who.organizationId }, lock: { mode: 'pessimistic_write' },
    });
    if (!request) throw notFound('request');
    if (request.status !== 'sent' && request.status !== 'reminded') {
      throw conflict(`the request is ${request.status}; only a sent request takes a reply`);
    }
    if (receivedAt.getTime() < request.sentAt!.getTime() || receivedAt.getTime() > Date.now() + CLOCK_SKEW_MS) {
      throw validationFailed([{ path: 'receivedAt', message: 'must lie between the request\'s sending and now' }]);
    }
    const flow = await pinnedFlow(em, request.flowVersionId);
    const itemId = newId('prf');
    const versionId = newId('pver');
    const personRef = request.recipientId ?? `psn_${request.id.slice(request.id.indexOf('_') + 1)}`;
    await em.getRepository(ProofItem).insert({
      id: itemId, organizationId: request.organizationId, productId: request.productId, submissionId: newId('sub'), type: 'text',
      status: 'submitted', statusReason: null, statusBeforeDelete: null, customerPersonId: personRef,
      customerEmail: request.recipient.email ?? null, customerName: request.recipient.name ?? null, originalVersionId: versionId,
      approvedPublicVersionId: null, overLimit: false, overLimitReasons: [],
      incentive: flow.incentive.offered ? { offered: true, ...(flow.incentive.description ? { description: String(flow.incentive.description) } : {}) }
      : { offered: false },
      // A teammate pasted the text: nothing proves who wrote it.
      verificationState: 'unverified', renderHold: false, createdByKeyId: null, updatedAt: dbNow,
    });
    const content = { text: body.text };
    const versions = em.getRepository(ProofVersion);
    await versions.save(versions.create({
      id: versionId, proofItemId: itemId, versionNumber: 1, isOriginal: true, content, contentHash: contentHash(content), createdByType: 'customer',
      createdById: personRef, modelId: null, changeReason: null, parentVersionId: null, locale: null, semanticDiff: {}, approvalState: 'draft',
    }));
    await em.query(
      `UPDATE proof_requests SET status = 'responded', responded_at = $2, updated_at = now() WHERE id = $1`, [request.id, receivedAt]);
    const actor: Actor = { type: 'teammate', id: who.teammateId };
    await appendProofEvent(em, {
      organizationId: request.organizationId, productId: request.productId, proofItemId: itemId, actor,
      eventType: 'proof.reply.captured', properties: { requestId: request.id, versionId, receivedAt: receivedAt.toISOString() },
    });
    await enqueueWorkflowCommand(em, { type: 'proof.request.closed', requestId: request.id, outcome: 'responded' });
    return { request: await em.getRepository(ProofRequest).findOneByOrFail({ id: request.id }), proofItemId: itemId, versionId };
  });
}

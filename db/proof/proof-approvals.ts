import { DataSource, In } from 'typeorm';
import { AfterWrite, transactionWith } from '../platform/idempotency';
import { conflict, notFound } from '../../runtime/service-error';
import { ConsentGrant, ProofApprovalRequest, ProofItem, ProofVersion } from '../entities';
import { newId } from '../rules/ids';
import { Actor, announceDirectly, appendProofEvent } from './proof-ledger';
import { assertChangeable, findItem, viewGrant, viewItem, viewVersion } from './proof-items';
import { consentStatus } from '../rules/proof-status';
import { PageRequest, pageOf } from '../pagination';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { videoMediaOf } from '../integrations/stream-copies';
import { databaseNow } from '../clock';

export interface ApprovalRef {
  requestId: string;
  proofItemId: string;
  versionId: string;
}

/**
 * Queues a version for a person; requesting is not approving. A newer request supersedes the item's
 * pending one (its workflow is told `superseded`). Asking again for the version already queued changes
 * nothing but makes sure its workflow runs. The workflow commands commit with the change.
 */
export async function requestApproval(
  ds: DataSource, scope: { organizationId: string; productId: string }, itemId: string, versionId: string, actor: Actor,
  reminderIntervalMs: number, after?: AfterWrite,
) {
  return transactionWith(ds, async (em) => {
    const item = await findItem(em, scope, itemId, true);
    assertChangeable(item);
    const versions = em.getRepository(ProofVersion);
    const requests = em.getRepository(ProofApprovalRequest);
    const version = await versions.findOneBy({ id: versionId, proofItemId: itemId });
    if (!version) throw notFound('version');
    if (version.approvalState === 'approved') throw conflict('this version is already approved');
    const pending = await requests.findOneBy({ proofItemId: itemId, state: 'pending' });
    if (pending && pending.versionId === versionId) {
      const existing: ApprovalRef = { requestId: pending.id, proofItemId: itemId, versionId };
      await enqueueWorkflowCommand(em, { type: 'proof.approval.start', tenant: { organizationId: item.organizationId, productId: item.productId },
        ref: existing, isNew: false, reminderIntervalMs });
      return { item: viewItem(item), version: viewVersion(version), approvalRequestId: pending.id, created: null, existing, superseded: null };
    }
    const now = await databaseNow(em);
    let superseded: ApprovalRef | null = null;
    if (pending) {
      await requests.update(pending.id, { state: 'superseded', decidedAt: now });
      await versions.update(pending.versionId, { approvalState: 'draft' });
      superseded = { requestId: pending.id, proofItemId: itemId, versionId: pending.versionId };
      await enqueueWorkflowCommand(em, { type: 'proof.approval.outcome', ref: superseded, outcome: 'superseded' });
    }
    const request = requests.create({
      id: newId('apr'), organizationId: item.organizationId, proofItemId: itemId, versionId,
      state: 'pending', requestedByType: actor.type, requestedById: actor.id, remindersSent: 0,
    });
    await requests.insert(request);
    await versions.update(versionId, { approvalState: 'pending_review' });
    // An approved item keeps serving its approved version while a newer wording is reviewed.
    const status = item.status === 'approved' ? 'approved' : 'in_review';
    await em.getRepository(ProofItem).update(itemId, { status, statusReason: null, updatedAt: now });
    await appendProofEvent(em, {
      organizationId: item.organizationId, productId: item.productId, proofItemId: itemId, actor,
      eventType: 'proof.item.review_requested', properties: { versionId, approvalRequestId: request.id },
    });
    const created: ApprovalRef = { requestId: request.id, proofItemId: itemId, versionId };
    await enqueueWorkflowCommand(em, { type: 'proof.approval.start', tenant: { organizationId: item.organizationId, productId: item.productId }, ref: created,
      isNew: true, reminderIntervalMs });
    return {
      item: viewItem(await em.getRepository(ProofItem).findOneByOrFail({ id: itemId })),
      version: viewVersion(await versions.findOneByOrFail({ id: versionId })),
      approvalRequestId: request.id,
      created,
      existing: null,
      superseded,
    };
  }, after);
}

export type Decision = { kind: 'approve'; versionId: string } | { kind: 'reject'; reason: string; versionId?: string };

/**
 * A person's decision, made in one transaction under the item's row lock, so of two racing
 * decisions exactly one finds the request pending; the other (and any decision on a superseded or
 * decided request) is a 409 CONFLICT. The caller signals the workflow after the commit.
 */
export async function decideApproval(ds: DataSource, organizationId: string, itemId: string, decision: Decision, teammateId: string) {
  return ds.transaction(async (em) => {
    const item = await findItem(em, { organizationId }, itemId, true);
    assertChangeable(item);
    const requests = em.getRepository(ProofApprovalRequest);
    const versions = em.getRepository(ProofVersion);
    let request: ProofApprovalRequest | null;
    if (decision.kind === 'approve') {
      if (!(await versions.existsBy({ id: decision.versionId, proofItemId: itemId }))) throw notFound('version');
      request = await requests.findOneBy({ proofItemId: itemId, versionId: decision.versionId, state: 'pending' });
    } else {
      request = await requests.findOneBy({ proofItemId: itemId, state: 'pending' });
      // A reviewer who names the version they read is refused when a newer request took its place.
      if (request && decision.versionId !== undefined && request.versionId !== decision.versionId) request = null;
    }
    if (!request) throw conflict('nothing awaits review here: the request was already decided, superseded or never made');
    const now = await databaseNow(em);
    const actor: Actor = { type: 'teammate', id: teammateId };
    const version = await versions.findOneByOrFail({ id: request.versionId });
    const ledger = { organizationId: item.organizationId, productId: item.productId, proofItemId: itemId, actor };
    if (decision.kind === 'approve') {
      await requests.update(request.id, { state: 'approved', decidedBy: teammateId, decidedAt: now });
      await versions.update(version.id, { approvalState: 'approved' });
      await em.getRepository(ProofItem).update(itemId, {
        status: 'approved', statusReason: null, approvedPublicVersionId: version.id, updatedAt: now,
      });
      await appendProofEvent(em, {
        ...ledger, eventType: 'proof.item.approved', properties: { versionId: version.id, versionNumber: version.versionNumber },
      });
      // The customer's videos go to the video host once approved (the relay skips this without one).
      for (const mediaAssetId of await videoMediaOf(em, version.content.mediaAssetIds ?? [])) {
        await enqueueWorkflowCommand(em, {
          type: 'proof.stream.copy', tenant: { organizationId: item.organizationId, productId: item.productId }, mediaAssetId, versionId: version.id,
        });
      }
    } else {
      await requests.update(request.id, { state: 'rejected', decidedBy: teammateId, decidedAt: now, reason: decision.reason });
      await versions.update(version.id, { approvalState: 'rejected' });
      // Rejecting a newer wording leaves an earlier approval standing.
      const status = item.approvedPublicVersionId ? 'approved' : 'rejected';
      await em.getRepository(ProofItem).update(itemId, {
        status, statusReason: status === 'rejected' ? decision.reason : item.statusReason, updatedAt: now,
      });
      const event = await appendProofEvent(em, {
        ...ledger, eventType: 'proof.item.rejected', properties: { versionId: version.id, approvalRequestId: request.id },
      });
      await announceDirectly(em, 'proof.item.rejected', event);
    }
    const ref: ApprovalRef = { requestId: request.id, proofItemId: itemId, versionId: version.id };
    const outcome = decision.kind === 'approve' ? 'approved' as const : 'rejected' as const;
    await enqueueWorkflowCommand(em, { type: 'proof.approval.outcome', ref, outcome });
    return {
      ref,
      outcome,
      item: viewItem(await em.getRepository(ProofItem).findOneByOrFail({ id: itemId })),
      version: viewVersion(await versions.findOneByOrFail({ id: version.id })),
    };
  });
}

/**
 * Records the `n`th reminder of a pending request (idempotent for a retried activity) and answers the
 * request's state, so a workflow whose decision signal was lost still learns the outcome.
 */
export async function recordApprovalReminder(ds: DataSource, requestId: string, n: number): Promise<string> {
  await ds.query(
    `UPDATE proof_approval_requests SET reminders_sent = GREATEST(reminders_sent, $2), last_reminded_at = now()
      WHERE id = $1 AND state = 'pending' AND reminders_sent < $2`,
    [requestId, n],
  );
  const request = await ds.getRepository(ProofApprovalRequest).findOneBy({ id: requestId });
  return request?.state ?? 'cancelled';
}

/** Versions awaiting a person in the workspace, oldest request first, with the wording to review. */
export async function reviewQueue(ds: DataSource, organizationId: string, page: PageRequest) {
  const qb = ds.getRepository(ProofApprovalRequest).createQueryBuilder('r')
    .where('r.organization_id = :organizationId', { organizationId })
    .andWhere(`r.state = 'pending'`);
  const result = await pageOf(qb, 'r', page, (row) => row, 'ASC');
  const itemIds = result.data.map((r) => r.proofItemId);
  const versionIds = result.data.map((r) => r.versionId);
  const items = new Map((itemIds.length ? await ds.getRepository(ProofItem).findBy({ id: In(itemIds) }) : []).map((i) => [i.id, i]));
  // The console shows the original beside the queued version and the item's consent (PAGES.md §5).
  const originalIds = [...items.values()].flatMap((i) => (i.originalVersionId ? [i.originalVersionId] : []));
  const wanted = [...new Set([...versionIds, ...originalIds])];
  const versions = new Map((wanted.length ? await ds.getRepository(ProofVersion).findBy({ id: In(wanted) }) : []).map((v) => [v.id, v]));
  const grants = itemIds.length ? await ds.getRepository(ConsentGrant).find({ where: { proofItemId: In(itemIds) }, order: { createdAt: 'DESC', id: 'DESC' } })
    : [];
  const consentOf = (item: ProofItem) => {
    const own = grants.filter((g) => g.proofItemId === item.id);
    return { proofItemId: item.id, status: consentStatus(item, own), grants: own.map(viewGrant) };
  };
  const originalBeside = (item: ProofItem, versionId: string) => {
    const original = item.originalVersionId ? versions.get(item.originalVersionId) : undefined;
    return original && original.id !== versionId ? viewVersion(original) : null;
  };
  return {
    data: result.data.map((r) => ({
      id: r.id,
      proofItemId: r.proofItemId,
      versionId: r.versionId,
      requestedAt: r.createdAt.toISOString(),
      requestedBy: { type: r.requestedByType, id: r.requestedById },
      remindersSent: r.remindersSent,
      item: viewItem(items.get(r.proofItemId)!),
      version: viewVersion(versions.get(r.versionId)!),
      original: originalBeside(items.get(r.proofItemId)!, r.versionId),
      consent: consentOf(items.get(r.proofItemId)!),
    })),
    nextCursor: result.nextCursor,
  };
}

import { DataSource, EntityManager, In } from 'typeorm';
import { AfterWrite, transactionWith } from '../platform/idempotency';
import { conflict, notFound } from '../../runtime/service-error';
import { ConsentGrant, ProofApprovalRequest, ProofItem, ProofRevocation, ProofVersion } from '../entities';
import { newId } from '../rules/ids';
import { ApprovalRef } from './proof-approvals';
import { Actor, SYSTEM_ACTOR, announceDirectly, appendProofEvent } from './proof-ledger';
import { findItem } from './proof-items';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { databaseNow } from '../clock';

/** What happens the moment a revocation is filed, before any person acts. */
export const IMMEDIATE_POLICY_ACTION = 'stop_new_renders';

export function viewRevocationResult(r: ProofRevocation) {
  return {
    requestOnly: true,
    revocation: {
      id: r.id,
      resolutionState: r.resolutionState,
      immediatePolicyAction: r.immediatePolicyAction,
      slaDeadlineAt: r.slaDeadlineAt.toISOString(),
    },
  };
}

/** Scoped through the item, so another product's grant is a 404 like an unknown one. */
async function findGrant(em: EntityManager, scope: { organizationId: string; productId: string }, id: string): Promise<ConsentGrant> {
  const grant = await em.getRepository(ConsentGrant).createQueryBuilder('g')
    .innerJoin(ProofItem, 'i', 'i.id = g.proof_item_id')
    .where('g.id = :id AND i.organization_id = :organizationId AND i.product_id = :productId', {
      id, organizationId: scope.organizationId, productId: scope.productId,
    })
    .getOne();
  if (!grant) throw notFound('consent grant');
  return grant;
}

export type RevocationTarget = { proofItemId: string } | { consentGrantId: string };

/**
 * Files a revocation request (a key cannot revoke directly). New renders stop at once; a person
 * completes it. While one is open, filing again answers the open one; after completion, the final one.
 */
export async function requestRevocation(
  ds: DataSource, scope: { organizationId: string; productId: string }, target: RevocationTarget,
  input: { requestText?: string; slaMs: number }, actor: Actor, after?: AfterWrite,
) {
  return transactionWith(ds, async (em) => {
    const grant = 'consentGrantId' in target ? await findGrant(em, scope, target.consentGrantId) : null;
    const itemId = grant ? grant.proofItemId : (target as { proofItemId: string }).proofItemId;
    const grantId = grant?.id ?? null;
    const item = await findItem(em, scope, itemId, true);
    const revocations = em.getRepository(ProofRevocation);
    const existing = await revocations.findOne({
      where: item.status === 'revoked' ? { proofItemId: itemId, resolutionState: 'completed' }
      : { proofItemId: itemId, resolutionState: In(['pending', 'escalated']) },
      order: { createdAt: 'DESC' },
    });
    if (existing) {
      const open = existing.resolutionState !== 'completed';
      if (open) {
        await enqueueWorkflowCommand(em, {
          type: 'proof.revocation.start', tenant: { organizationId: item.organizationId, productId: item.productId }, revocationId: existing.id,
          slaDeadlineAt: existing.slaDeadlineAt.toISOString(),
        });
      }
      return { result: viewRevocationResult(existing), started: open ? { revocationId: existing.id, slaDeadlineAt: existing.slaDeadlineAt.toISOString() }
        : null };
    }
    const now = await databaseNow(em);
    const revocation = revocations.create({
      id: newId('rev'), organizationId: item.organizationId, proofItemId: itemId, consentGrantId: grantId,
      requestText: input.requestText ?? null, resolutionState: 'pending', immediatePolicyAction: IMMEDIATE_POLICY_ACTION,
      slaDeadlineAt: new Date(now.getTime() + input.slaMs), requestedByType: actor.type, requestedById: actor.id,
    });
    await revocations.insert(revocation);
    await em.getRepository(ProofItem).update(itemId, { renderHold: true, updatedAt: now });
    await appendProofEvent(em, {
      organizationId: item.organizationId, productId: item.productId, proofItemId: itemId, actor,
      eventType: 'proof.revocation.requested', properties: { revocationId: revocation.id, consentGrantId: grantId },
    });
    const saved = await revocations.findOneByOrFail({ id: revocation.id });
    await enqueueWorkflowCommand(em, {
      type: 'proof.revocation.start', tenant: { organizationId: item.organizationId, productId: item.productId }, revocationId: saved.id,
      slaDeadlineAt: saved.slaDeadlineAt.toISOString(),
    });
    return { result: viewRevocationResult(saved), started: { revocationId: saved.id, slaDeadlineAt: saved.slaDeadlineAt.toISOString() } };
  }, after);
}

/**
 * A person completes a revocation: final for the item, whatever was approved before. Every grant is
 * withdrawn, the public version is cleared, pending reviews are cancelled (returned so the caller can
 * end their workflows).
 */
export async function completeRevocation(ds: DataSource, organizationId: string, revocationId: string, teammateId: string) {
  return ds.transaction(async (em) => {
    const revocations = em.getRepository(ProofRevocation);
    const revocation = await revocations.findOne({ where: { id: revocationId, organizationId }, lock: { mode: 'pessimistic_write' } });
    if (!revocation) throw notFound('revocation');
    if (revocation.resolutionState === 'completed') throw conflict('this revocation is already completed; it is final');
    const item = await em.getRepository(ProofItem).findOneOrFail({ where: { id: revocation.proofItemId }, lock: { mode: 'pessimistic_write' } });
    const now = await databaseNow(em);
    await revocations.update(revocation.id, { resolutionState: 'completed', completedBy: teammateId, completedAt: now });
    // A deleted item stays deleted, but comes back revoked if a person restores it.
    const statusFields = item.status === 'deleted' ? { statusBeforeDelete: 'revoked' as const } : { status: 'revoked' as const };
    await em.getRepository(ProofItem).update(item.id, {
      ...statusFields, statusReason: 'revoked', revokedAt: now, approvedPublicVersionId: null, renderHold: true, updatedAt: now,
    });
    const grants = await em.getRepository(ConsentGrant).findBy({ proofItemId: item.id, state: 'active' });
    if (grants.length > 0) {
      await em.getRepository(ConsentGrant).update({ id: In(grants.map((g) => g.id)) }, { state: 'revoked', revokedAt: now });
    }
    const pending = await em.getRepository(ProofApprovalRequest).findBy({ proofItemId: item.id, state: 'pending' });
    for (const request of pending) {
      await em.getRepository(ProofApprovalRequest).update(request.id, { state: 'cancelled', decidedAt: now });
      await em.getRepository(ProofVersion).update(request.versionId, { approvalState: 'draft' });
    }
    const event = await appendProofEvent(em, {
      organizationId: item.organizationId, productId: item.productId, proofItemId: item.id,
      actor: { type: 'teammate', id: teammateId }, eventType: 'proof.consent.revoked',
      properties: { revocationId: revocation.id, consentGrantId: revocation.consentGrantId, consentGrantIds: grants.map((g) => g.id) },
    });
    await announceDirectly(em, 'proof.revocation.completed', event);
    const cancelled: ApprovalRef[] = pending.map((r) => ({ requestId: r.id, proofItemId: r.proofItemId, versionId: r.versionId }));
    await enqueueWorkflowCommand(em, { type: 'proof.revocation.completed', revocationId: revocation.id });
    for (const ref of cancelled) await enqueueWorkflowCommand(em, { type: 'proof.approval.outcome', ref, outcome: 'cancelled' });
    return { result: viewRevocationResult(await revocations.findOneByOrFail({ id: revocation.id })), cancelled };
  });
}

/** The SLA passed without a person: mark it and warn (once, however often the activity retries). */
export async function escalateRevocation(ds: DataSource, revocationId: string): Promise<boolean> {
  return ds.transaction(async (em) => {
    // TypeORM answers an UPDATE ... RETURNING as [rows, affected].
    const [rows]: [Array<{ organization_id: string; proof_item_id: string }>, number] = await em.query(
      `UPDATE proof_revocations SET resolution_state = 'escalated', escalated_at = now()
        WHERE id = $1 AND resolution_state = 'pending' RETURNING organization_id, proof_item_id`,
      [revocationId],
    );
    const row = rows[0];
    if (!row) return false;
    const item = await em.getRepository(ProofItem).findOneByOrFail({ id: row.proof_item_id });
    await appendProofEvent(em, {
      organizationId: row.organization_id, productId: item.productId, proofItemId: item.id, actor: SYSTEM_ACTOR,
      eventType: 'proof.health.warning', properties: { check: 'revocation_sla_missed', revocationId },
    });
    return true;
  });
}

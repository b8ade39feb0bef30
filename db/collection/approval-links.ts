import { DataSource } from 'typeorm';
import { ServiceError, conflict, notFound } from '../../runtime/service-error';
import { ProofItem, ProofVersion } from '../entities';
import { revokedFinal } from '../proof/proof-items';
import { newId } from '../rules/ids';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { controlLinkExpiry, endUserOfPerson } from './control-links';

/** The item a teammate asks its customer about: the workspace's, not revoked, with a known person. */
export async function approvalTarget(ds: DataSource, organizationId: string, itemId: string, versionId?: string) {
  const item = await ds.getRepository(ProofItem).findOneBy({ id: itemId, organizationId });
  if (!item || item.status === 'deleted') throw notFound('proof item');
  if (item.status === 'revoked') throw revokedFinal();
  if (!item.customerPersonId) throw conflict('the item has no customer to ask: it was not submitted by a known person');
  if (versionId !== undefined) {
    const version = await ds.getRepository(ProofVersion).findOneBy({ id: versionId, proofItemId: itemId });
    if (!version) throw notFound('version');
    if (version.isOriginal) throw new ServiceError('CONFLICT', 'the original needs no approval; name a later version');
  }
  return item;
}

/**
 * Asks the item's customer about its wording. The version is already among the pendingApprovals of
 * any control link they hold, so `none` only answers; `email` and `in_app` also have a person link
 * delivered to the person (the delivery mints it: no secret is answered, or travels through the
 * outbox or Temporal). `expiresAt` is that link's.
 */
export async function requestCustomerApproval(ds: DataSource, item: ProofItem, controlTtlDays: number, deliver: 'none' | 'email' | 'in_app') {
  if (deliver === 'none') return { delivered: deliver, expiresAt: null };
  const person = { organizationId: item.organizationId, productId: item.productId, personRef: item.customerPersonId! };
  if (deliver === 'in_app' && !(await endUserOfPerson(ds, person))) {
    throw conflict('the customer has no in-app inbox: no end user is known for their stories');
  }
  const expiresAt = controlLinkExpiry(controlTtlDays).toISOString();
  await ds.transaction(async (em) => {
    await enqueueWorkflowCommand(em, {
      type: 'collection.approval_link.deliver', tenant: { organizationId: item.organizationId, productId: item.productId },
      deliveryId: newId('ald'), proofItemId: item.id, channel: deliver, reason: 'approval', expiresAt,
    });
  });
  return { delivered: deliver, expiresAt };
}

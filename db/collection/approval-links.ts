import { DataSource } from 'typeorm';
import { ServiceError, conflict, notFound } from '../../runtime/service-error';
import { ProofItem, ProofVersion } from '../entities';
import { revokedFinal } from '../proof/proof-items';
import { newId } from '../rules/ids';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { issueControlLink } from './submit';

export interface ApprovalLinkSettings { pageUrl: string; controlTtlDays: number }

/** The item a teammate asks its customer about: the workspace's, not revoked, with a known person. */
export async function approvalTarget(ds: DataSource, organizationId: string, itemId: string, versionId?: string) {
  const item = await ds.getRepository(ProofItem).findOneBy({ id: itemId, organizationId });
  if (!item || item.status === 'deleted') throw notFound('proof item');
  if (item.status === 'revoked') throw revokedFinal();
  if (!item.customerPersonId) throw conflict('the item has no customer to ask: it was not submitted by a known person');
  if (versionId !== undefined) {
    const version = await ds.getRepository(ProofVersion).findOneBy({ id: versionId, proofItemId: itemId });
    if (!version) throw notFound('version');
    if (version.isOriginal) throw new ServiceError('CONFLICT', 409, 'the original needs no approval; name a later version');
  }
  return item;
}

/**
 * A control link for the item's customer (re-issued when theirs was lost, or to ask for approval of
 * a newer version, which their control page lists under pendingApprovals). The secret is shown once.
 */
export async function issueApprovalLink(ds: DataSource, item: ProofItem, settings: ApprovalLinkSettings, deliver: 'none' | 'email' | 'in_app' = 'none') {
  return ds.transaction(async (em) => {
    const link = await issueControlLink(em, {
      organizationId: item.organizationId, productId: item.productId, personRef: item.customerPersonId!,
    }, settings);
    // The delivery mints its own link, so this secret never travels through the outbox or Temporal.
    if (deliver !== 'none') {
      await enqueueWorkflowCommand(em, {
        type: 'collection.approval_link.deliver', tenant: { organizationId: item.organizationId, productId: item.productId },
        deliveryId: newId('ald'), proofItemId: item.id, channel: deliver,
      });
    }
    return link;
  });
}

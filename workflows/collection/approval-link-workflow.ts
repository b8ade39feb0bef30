import { proxyActivities } from '@temporalio/workflow';
import type { createProofRequestActivities } from '../../activities/collection/proof-request-activities';

const { deliverApprovalLink } = proxyActivities<ReturnType<typeof createProofRequestActivities>>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '5 minutes' },
});

export interface ApprovalLinkInput {
  proofItemId: string;
  channel: 'email' | 'in_app';
  /** Absent in runs started before person links: an approval, expiring a link lifetime after delivery. */
  reason?: 'approval' | 'person_link';
  expiresAt?: string;
}

/**
 * Delivers a person link to the customer of a story (docs/collection.md#story-links-and-person-links), by e-mail to that story's
 * address or to their in-app inbox, retrying until the mail server takes it: for a teammate's approval
 * request, or because the customer asked for it with a link they hold.
 */
export async function approvalLinkWorkflow(input: ApprovalLinkInput): Promise<string> {
  return deliverApprovalLink(input.proofItemId, input.channel, input.reason, input.expiresAt);
}

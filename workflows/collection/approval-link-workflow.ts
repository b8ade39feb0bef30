import { proxyActivities } from '@temporalio/workflow';
import type { createProofRequestActivities } from '../../activities/collection/proof-request-activities';

const { deliverApprovalLink } = proxyActivities<ReturnType<typeof createProofRequestActivities>>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '5 minutes' },
});

export const approvalLinkWorkflowId = (itemId: string, requestId: string) => `approval-link/${itemId}/${requestId}`;

export interface ApprovalLinkInput {
  proofItemId: string;
  channel: 'email' | 'in_app';
}

/** Delivers a customer's approval link by e-mail or to their in-app inbox, retrying until the mail server takes it. */
export async function approvalLinkWorkflow(input: ApprovalLinkInput): Promise<string> {
  return deliverApprovalLink(input.proofItemId, input.channel);
}

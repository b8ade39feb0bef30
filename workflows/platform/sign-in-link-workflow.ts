import { proxyActivities } from '@temporalio/workflow';
import type { createSignInActivities } from '../../activities/platform/sign-in-activities';

// Retrying past the link's 15 minutes would only mail a dead link: the activity then answers 'expired'.
const { deliverSignInLink } = proxyActivities<ReturnType<typeof createSignInActivities>>({
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '16 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export interface SignInLinkInput {
  linkId: string;
}

/** Mails a teammate the console sign-in link they asked for (PAGES.md §5), retrying until the mail server takes it. */
export async function signInLinkWorkflow(input: SignInLinkInput): Promise<string> {
  return deliverSignInLink(input.linkId);
}

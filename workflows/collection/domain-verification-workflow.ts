import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createDomainActivities } from '../../activities/collection/domain-activities';

const { checkCollectionDomain, failCollectionDomain } = proxyActivities<ReturnType<typeof createDomainActivities>>({
  startToCloseTimeout: '1 minute',
  // A resolver that cannot answer (down, SERVFAIL) comes back; a missing record is an answer, not a failure.
  retry: { initialInterval: '5 seconds', maximumInterval: '5 minutes' },
});

/** A person asked to check now (they just set the records). */
export const checkNowSignal = defineSignal('check');

export interface DomainVerificationInput {
  domainId: string;
  intervalMs: number;
  /** Past this, a domain still unverified is `failed`. */
  deadline: string;
}

/** Checks a custom domain's DNS records at once, then every interval or when asked, until verified, removed or the deadline. */
export async function domainVerificationWorkflow(input: DomainVerificationInput): Promise<string> {
  let asked = false;
  setHandler(checkNowSignal, () => {
    asked = true;
  });
  for (;;) {
    asked = false;
    const outcome = await checkCollectionDomain(input.domainId);
    if (outcome !== 'pending') return outcome;
    const left = Date.parse(input.deadline) - Date.now();
    if (left <= 0) {
      await failCollectionDomain(input.domainId);
      return 'failed';
    }
    await condition(() => asked, Math.min(input.intervalMs, left));
  }
}

import { condition, continueAsNew, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createIntegrationActivities } from '../../activities/integrations/integration-activities';

const { runProofHealthChecks } = proxyActivities<ReturnType<typeof createIntegrationActivities>>({
  startToCloseTimeout: '5 minutes',
  // A database outage must not stop the checks for good.
  retry: { initialInterval: '5 seconds', maximumInterval: '5 minutes' },
});

/** Runs the checks now instead of at the next interval. */
export const runHealthNowSignal = defineSignal('runHealthNow');

export interface ProofHealthInput {
  productId: string;
  intervalMs: number;
}

// Keeps each run's history short; the next run carries on.
const ROUNDS_PER_RUN = 50;

/** The product's health checks, on an interval for as long as the service runs. */
export async function proofHealthWorkflow(input: ProofHealthInput): Promise<void> {
  let requested = false;
  setHandler(runHealthNowSignal, () => {
    requested = true;
  });
  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    requested = false;
    await runProofHealthChecks(input.productId);
    await condition(() => requested, input.intervalMs);
  }
  await continueAsNew<typeof proofHealthWorkflow>(input);
}

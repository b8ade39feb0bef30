import fs from 'node:fs';
import path from 'node:path';
import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { PREBUILT_WORKFLOW_BUNDLE } from '../worker/workflow-bundle';

/**
 * `npm run build`'s last step, run from the compiled tree: bundles the compiled workflows once, into
 * the file a worker of that tree loads at start instead of bundling (worker/workflow-bundle.ts).
 */
async function main(): Promise<void> {
  const workflowsPath = path.join(__dirname, '..', 'workflows');
  const { code } = await bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') });
  fs.writeFileSync(PREBUILT_WORKFLOW_BUNDLE, code);
  console.log(`workflow bundle: ${PREBUILT_WORKFLOW_BUNDLE} (${Math.round(code.length / 1024)} KiB)`);
}

main().catch((err: unknown) => {
  console.error(`build-workflow-bundle: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

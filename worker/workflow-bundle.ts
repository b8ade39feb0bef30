import fs from 'node:fs';
import path from 'node:path';
import type { WorkerOptions } from '@temporalio/worker';
import { Config } from '../runtime/config';

/** Where `npm run build` writes the prebuilt bundle: beside the compiled tree's folders (dist/workflow-bundle.js). */
export const PREBUILT_WORKFLOW_BUNDLE = path.join(__dirname, '..', 'workflow-bundle.js');

/**
 * The workflow bundle a worker loads instead of bundling at start: SV_WORKFLOW_BUNDLE, else the one
 * the build wrote beside this file (only a built tree has it); none: the worker bundles the sources.
 */
export function workflowBundleOf(config: Pick<Config, 'workflowBundlePath'>): WorkerOptions['workflowBundle'] {
  if (config.workflowBundlePath) return { codePath: config.workflowBundlePath };
  return fs.existsSync(PREBUILT_WORKFLOW_BUNDLE) ? { codePath: PREBUILT_WORKFLOW_BUNDLE } : undefined;
}

import { TestWorkflowEnvironment } from '@temporalio/testing';
import { TENANT_SEARCH_ATTRIBUTES } from './workflow-memo';

export interface DevServerOptions {
  /** Path of the `temporal` binary; undefined lets the SDK download one (needs internet). */
  executable: string | undefined;
  namespace: string;
  port?: number;
  uiPort?: number;
  /** SQLite file that keeps workflow history across restarts; in memory when absent. */
  dbFilename?: string;
  /** The server's own log level on stdout; warn by default. */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
}

/** Runs `temporal server start-dev` and connects a client and a worker connection to it. */
export async function startTemporalDevServer(opts: DevServerOptions): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: opts.executable ? { type: 'existing-path', path: opts.executable } : { type: 'cached-download' },
      ip: '127.0.0.1',
      port: opts.port,
      ui: opts.uiPort !== undefined,
      uiPort: opts.uiPort,
      dbFilename: opts.dbFilename,
      namespace: opts.namespace,
      searchAttributes: TENANT_SEARCH_ATTRIBUTES,
      log: { format: 'pretty', level: opts.logLevel ?? 'warn' },
    },
  });
}

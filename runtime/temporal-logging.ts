import { DefaultLogger, LogLevel, Runtime } from '@temporalio/worker';

/** Installs the SDK's logger at LOG_LEVEL (default WARN); must run before any worker or dev server starts. */
export function installTemporalLogger(level = (process.env.TEMPORAL_LOG_LEVEL ?? 'WARN').toUpperCase()): void {
  Runtime.install({ logger: new DefaultLogger(level as LogLevel) });
}

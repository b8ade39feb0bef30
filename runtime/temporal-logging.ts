import { DefaultLogger, LogLevel, Runtime } from '@temporalio/worker';

/**
 * Installs the SDK runtime with its logger at TEMPORAL_LOG_LEVEL (default WARN) and without its own
 * signal handlers, so that our shutdown stops things in order. Must run before any worker starts.
 * With `metricsAddress` (host:port), the SDK's own worker metrics are served there in the Prometheus
 * format; the worker's metrics listener adds them to its /metrics.
 */
export function installTemporalLogger(level = (process.env.TEMPORAL_LOG_LEVEL ?? 'WARN').toUpperCase(), metricsAddress?: string): void {
  Runtime.install({
    logger: new DefaultLogger(level as LogLevel),
    shutdownSignals: [],
    ...(metricsAddress ? { telemetryOptions: { metrics: { prometheus: { bindAddress: metricsAddress } } } } : {}),
  });
}

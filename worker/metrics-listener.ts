import http from 'node:http';
import { AddressInfo } from 'node:net';
import { metricsText } from '../runtime/metrics';

export interface MetricsListener {
  url: string;
  close: () => Promise<void>;
}

/** The Temporal SDK's own metrics text, from the endpoint its runtime serves on loopback; none when it does not answer. */
async function sdkMetrics(sdkMetricsUrl: string | undefined): Promise<string> {
  if (!sdkMetricsUrl) return '';
  try {
    const res = await fetch(sdkMetricsUrl, { signal: AbortSignal.timeout(2_000) });
    return res.ok ? await res.text() : '';
  } catch {
    return '';
  }
}

/**
 * A worker's small HTTP listener: `GET /metrics` (this process's metrics, then the Temporal SDK's
 * worker metrics, so one scrape target has both) and `GET /healthz` (liveness).
 */
export async function startMetricsListener(host: string, port: number, sdkMetricsUrl?: string): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"status":"ok"}}');
      return;
    }
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"NOT_FOUND","message":"GET /metrics or /healthz"}}');
      return;
    }
    void sdkMetrics(sdkMetricsUrl).then(metricsText).then(
      (text) => res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${bound}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

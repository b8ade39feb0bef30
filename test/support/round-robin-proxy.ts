import http from 'node:http';
import { AddressInfo } from 'node:net';

export interface ProxyCounts {
  requests: number;
  /** Answers of 500 and above the clients received (an upstream's, or the proxy's 502). */
  serverErrors: number;
  /** Requests whose upstream connection failed after it was sent (reset, closed without an answer). */
  resets: number;
  /** Connections refused by an upstream, tried again on the next one (what Caddy's lb_try_duration does). */
  retriedRefusals: number;
}

/**
 * The reverse proxy of the compose file in small: round robin, one upstream connection per request, a
 * refused connection tried on the next upstream (Caddy's `lb_try_duration`; Caddy runs no active
 * health checks on `dynamic` upstreams, so neither does this by default). With `healthIntervalMs`,
 * upstreams whose GET /readyz fails are left out, as a readiness-checking balancer does.
 * Counts what the clients would have seen go wrong.
 */
export class RoundRobinProxy {
  readonly counts: ProxyCounts = { requests: 0, serverErrors: 0, resets: 0, retriedRefusals: 0 };
  private healthy: Set<string>;
  private turn = 0;
  private timer: NodeJS.Timeout | null = null;
  private server = http.createServer((req, res) => this.forward(req, res));

  private constructor(private readonly upstreams: string[], private readonly healthIntervalMs: number) {
    this.healthy = new Set(upstreams);
  }

  static async start(upstreams: string[], healthIntervalMs = 0): Promise<RoundRobinProxy> {
    const proxy = new RoundRobinProxy(upstreams, healthIntervalMs);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    if (healthIntervalMs > 0) proxy.timer = setInterval(() => void proxy.check(), healthIntervalMs);
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  healthyUpstreams(): string[] {
    return [...this.healthy];
  }

  private async check(): Promise<void> {
    await Promise.all(this.upstreams.map(async (upstream) => {
      const ok = await fetch(`${upstream}/readyz`, { signal: AbortSignal.timeout(this.healthIntervalMs * 4) }).then((r) => r.ok, () => false);
      if (ok) this.healthy.add(upstream);
      else this.healthy.delete(upstream);
    }));
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.counts.requests++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const candidates = this.healthy.size > 0 ? [...this.healthy] : this.upstreams;
      const start = this.turn++;
      const attempt = (n: number) => {
        const target = new URL(candidates[(start + n) % candidates.length]);
        const upstream = http.request({
          host: target.hostname, port: target.port, method: req.method, path: req.url, agent: false,
          headers: { ...req.headers, connection: 'close', 'x-forwarded-for': req.socket.remoteAddress ?? '127.0.0.1' },
        }, (answer) => {
          if ((answer.statusCode ?? 502) >= 500) this.counts.serverErrors++;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.on('aborted', () => {
            this.counts.resets++;
            res.destroy();
          });
        });
        upstream.on('error', (err: NodeJS.ErrnoException) => {
          if (err.code === 'ECONNREFUSED' && n + 1 < candidates.length * 2) {
            this.counts.retriedRefusals++;
            attempt(n + 1);
            return;
          }
          this.counts.resets++;
          if (!res.headersSent) {
            this.counts.serverErrors++;
            res.writeHead(502).end();
          } else {
            res.destroy();
          }
        });
        upstream.end(body);
      };
      attempt(0);
    });
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

import http from 'node:http';
import { AddressInfo } from 'node:net';

export interface Received {
  at: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Behaviour =
  | { status: number; body?: string; headers?: Record<string, string> }
  | { hangMs: number };

/**
 * A real HTTP server on 127.0.0.1 that records every request and answers from a script of
 * behaviours (the last one repeats).
 */
export class Receiver {
  readonly requests: Received[] = [];
  /** Held requests (`hangMs`) whose sender closed the connection before the answer, and when. */
  readonly aborted: Array<Received & { abortedAt: number }> = [];
  private script: Behaviour[] = [{ status: 200 }];
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received = { at: Date.now(), path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      this.requests.push(received);
      const step = this.script.length > 1 ? this.script.shift()! : this.script[0];
      if ('hangMs' in step) {
        const timer = setTimeout(() => res.writeHead(200).end('late'), step.hangMs).unref();
        res.on('close', () => {
          if (res.writableEnded) return;
          clearTimeout(timer);
          this.aborted.push({ ...received, abortedAt: Date.now() });
        });
        return;
      }
      res.writeHead(step.status, step.headers).end(step.body ?? '');
    });
  });

  static async start(): Promise<Receiver> {
    const receiver = new Receiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  answer(...script: Behaviour[]): this {
    this.script = script;
    return this;
  }

  async waitFor(count: number, timeoutMs = 10_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} requests, got ${this.requests.length}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.requests;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { AddressInfo } from 'node:net';

export interface CopyRequest {
  path: string;
  authorization: string | undefined;
  body: { url: string; meta: Record<string, string> };
  uid: string;
}

/**
 * A local stand-in for the video host's API (Cloudflare Stream's "upload from URL": POST
 * `/accounts/<id>/stream/copy` → `{success, result: {uid, ...}}`). It records each copy request; the
 * tests fetch the source link it was given from the service, as the host would.
 */
export class FakeStreamHost {
  readonly copies: CopyRequest[] = [];
  /** Statuses to answer instead of accepting, one per request, in order. */
  refusals: number[] = [];
  private server: http.Server | null = null;

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || !/^\/accounts\/[^/]+\/stream\/copy$/.test(req.url ?? '')) {
          res.writeHead(404).end();
          return;
        }
        const refusal = this.refusals.shift();
        if (refusal !== undefined) {
          res.writeHead(refusal, { 'content-type': 'application/json' }).end(JSON.stringify({ success: false, errors: [{ code: refusal }] }));
          return;
        }
        const uid = randomBytes(16).toString('hex');
        this.copies.push({ path: req.url!, authorization: req.headers.authorization, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), uid });
        res.writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ success: true, result: { uid, readyToStream: false, status: { state: 'downloading' } } }));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/accounts/acc_test/stream`;
  }

  copyOf(mediaAssetId: string): CopyRequest | undefined {
    return this.copies.find((c) => c.body.meta.mediaAssetId === mediaAssetId);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

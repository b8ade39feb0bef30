import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { FastifyInstance } from 'fastify';
import { Worker } from '@temporalio/worker';
import { Config } from '../../runtime/config';
import { S3MediaStore, readAll } from '../../runtime/media-store';
import { createWorker } from '../../worker/worker';
import { ctx } from '../support/root-hooks';
import { RunningMinio, findMinio, startMinio } from '../support/minio';
import { asDraft, createCollectionTenant, customerCall, pngBytes, sha256, startDraft } from '../support/collection';

describe('collection: the S3 media store against MinIO', function () {
  this.timeout(120_000);
  let minio: RunningMinio;
  let s3: NonNullable<Config['mediaS3']>;

  before(async function () {
    const binary = findMinio();
    // Building MinIO from the Go module proxy takes a long while; without the binary these tests say so.
    if (!binary) this.skip();
    minio = await startMinio(binary!);
    s3 = { endpoint: minio.endpoint, bucket: `sv-test-${randomBytes(4).toString('hex')}`, region: 'us-east-1', accessKeyId: minio.accessKeyId,
      secretAccessKey: minio.secretAccessKey };
  });
  after(async () => {
    await minio?.stop();
  });

  it('puts, composes past the 5 MiB part minimum, reads ranges and removes', async () => {
    const store = new S3MediaStore(s3);
    const parts = [randomBytes(6 * 1024 * 1024), randomBytes(5 * 1024 * 1024), randomBytes(1234)];
    for (const [i, p] of parts.entries()) await store.put(`uploads/t/part-${i + 1}`, p);
    let seen = 0;
    await store.compose('media/t/whole', parts.map((_, i) => `uploads/t/part-${i + 1}`), (chunk) => {
      seen += chunk.length;
    });
    const whole = Buffer.concat(parts);
    assert.equal(seen, whole.length);
    assert.equal(sha256(await readAll(await store.read('media/t/whole'))), sha256(whole));
    assert.deepEqual(await readAll(await store.read('media/t/whole', { start: 10, end: 19 })), whole.subarray(10, 20));
    await store.remove(['media/t/whole', 'uploads/t/part-1']);
    await assert.rejects(store.read('media/t/whole'));
  });

  it('an upload assembles through the API and a worker that share the bucket', async () => {
    const config: Config = { ...ctx.config, taskQueue: `s3-${randomBytes(4).toString('hex')}`, mediaS3: s3 };
    const worker: Worker = await createWorker({ connection: ctx.nativeConnection, dataSource: ctx.dataSource, config, workflowBundle: ctx.workflowBundle });
    const running = worker.run();
    let app: FastifyInstance | undefined;
    try {
      app = await ctx.buildApp({ taskQueue: config.taskQueue, mediaS3: s3 });
      const t = await createCollectionTenant();
      const d = await startDraft(t, app);
      const file = pngBytes(150_000);
      const opened = await customerCall(asDraft(d, {
        method: 'POST', url: `/api/proof/collect/drafts/${d.id}/uploads`, payload: { kind: 'image', size: file.length, sha256: sha256(file), partSize: 65536 },
      }), app);
      assert.equal(opened.statusCode, 201, opened.body);
      const { upload, uploadToken } = opened.json().data;
      for (const n of [3, 1, 2]) {
        const res = await customerCall({
          method: 'PUT', url: `/api/proof/collect/drafts/${d.id}/uploads/${upload.id}?part=${n}`, payload: file.subarray((n - 1) * 65536, n * 65536),
          headers: { 'x-upload-token': uploadToken, 'content-type': 'application/octet-stream' },
        }, app);
        assert.equal(res.statusCode, 200, res.body);
      }
      const done = await customerCall({ method: 'POST', url: `/api/proof/collect/drafts/${d.id}/uploads/${upload.id}`,
        headers: { 'x-upload-token': uploadToken } }, app);
      assert.equal(done.statusCode, 200, done.body);
      const [media] = await ctx.dataSource.query(`SELECT storage_key FROM collection_media WHERE id = $1`, [done.json().data.upload.assetId]);
      assert.equal(sha256(await readAll(await new S3MediaStore(s3).read(media.storage_key))), sha256(file));
    } finally {
      worker.shutdown();
      await running;
    }
  });
});

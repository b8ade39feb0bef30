import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createCollectionActivities } from '../../activities/collection/collection-activities';
import { ctx } from '../support/root-hooks';
import { endUserToken } from '../support/fixtures';
import { as } from '../support/collection-setup';
import { openRoom, roomsTenant } from '../support/rooms';
import {
  CollectionTenant, OpenDraft, asDraft, createCollectionTenant, customerCall, fillDraft, mp4Bytes, pngBytes, sha256, startDraft, collectionTenantOverHttp,
  submitDraft,
} from '../support/collection';

const PART = 64 * 1024;
const MiB = 1024 * 1024;

interface Answer { status: number; headers: http.IncomingHttpHeaders; body: string; ms: number }

/**
 * A request over a real socket that declares `declared` bytes and sends only `first` of them, then
 * waits: the answer must come while the body is still owed.
 */
class HeldRequest {
  readonly answered: Promise<Answer>;
  private readonly req: http.ClientRequest;

  constructor(base: string, method: string, url: string, headers: Record<string, string | number>, first: Buffer) {
    const started = Date.now();
    let resolve!: (a: Answer) => void;
    let reject!: (e: Error) => void;
    this.answered = new Promise<Answer>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.req = http.request(`${base}${url}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString(), ms: Date.now() - started }));
    });
    // Once the server answered and closed, writing more fails: that is the point, not an error of the test.
    this.req.on('error', (err) => reject(err));
    this.req.write(first);
  }

  write(bytes: Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.req.write(bytes, (err) => (err ? reject(err) : resolve())));
  }

  end(): void {
    this.req.end();
  }

  destroy(): void {
    this.req.destroy();
  }

  /** The answer within `ms`, else a failure naming what was waited for. */
  async within(ms: number, what: string): Promise<Answer> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms while the body was still owed`)), ms);
    });
    try {
      return await Promise.race([this.answered, late]);
    } finally {
      clearTimeout(timer);
      this.destroy();
    }
  }
}

describe('collection: upload bodies are judged before they are read, streamed to the store, and bounded', function () {
  this.timeout(60_000);
  let t: CollectionTenant;
  let base: string;

  before(async () => {
    ({ t, base } = await collectionTenantOverHttp());
  });

  async function openImage(d: OpenDraft, file: Buffer, onApp = ctx.app, remoteAddress?: string) {
    return customerCall({
      ...asDraft(d, { method: 'POST', url: `/api/proof/collect/drafts/${d.id}/uploads`,
        payload: { kind: 'image', size: file.length, sha256: sha256(file), partSize: PART } }),
      ...(remoteAddress ? { remoteAddress } : {}),
    }, onApp);
  }
  async function interviewUpload(video: Buffer) {
    const made = await as(t.owner, { method: 'POST', url: '/api/workspace/proof/interviews',
      payload: { productId: t.product.id, questions: [{ text: 'How did it go?' }] } });
    assert.equal(made.statusCode, 201, made.body);
    const token = made.json().data.interviewToken;
    const opened = await customerCall({
      method: 'POST', url: '/api/proof/interview', headers: { 'x-interview-token': token },
      payload: { action: 'start_upload', questionId: 'q1', size: video.length, sha256: sha256(video) },
    });
    assert.equal(opened.statusCode, 201, opened.body);
    return { ...opened.json().data as { upload: { id: string }; uploadToken: string }, interviewId: made.json().data.interview.id as string };
  }
  const octets = (token: string, length: number) => ({ 'x-upload-token': token, 'content-type': 'application/octet-stream', 'content-length': length });

  it('a 64 MiB PUT with a foreign or unknown upload token is refused at once, without the body, and the connection closed', async () => {
    const d = await startDraft(t);
    const image = pngBytes(100_000);
    const draftUpload = (await openImage(d, image)).json().data as { upload: { id: string }; uploadToken: string };
    const other = await startDraft(t);
    const otherUpload = (await openImage(other, image)).json().data as { upload: { id: string }; uploadToken: string };
    const few = Buffer.alloc(1024, 1);
    const refusals: Array<[string, string, string, Record<string, string | number>, number]> = [
      ['a draft\'s upload token on the interview route', 'PUT', `/api/proof/interview/uploads/${draftUpload.upload.id}`,
        octets(draftUpload.uploadToken, 64 * MiB), 404],
      ['an unknown token on the interview route', 'PUT', `/api/proof/interview/uploads/${draftUpload.upload.id}`, octets(`ut_${'A'.repeat(43)}`, 64 * MiB),
        401],
      ['another draft\'s upload token on a part', 'PUT', `/api/proof/collect/drafts/${d.id}/uploads/${draftUpload.upload.id}?part=1`,
        octets(otherUpload.uploadToken, 8 * MiB), 404],
      ['a draft\'s upload token on a welcome-video part', 'PUT', `/api/proof/collect/forms/${t.flowId}/welcome-video/wvd_unknown0000?part=1`,
        octets(draftUpload.uploadToken, 8 * MiB), 404],
    ];
    for (const [what, method, url, headers, status] of refusals) {
      const answer = await new HeldRequest(base, method, url, headers, few).within(2_000, what);
      assert.equal(answer.status, status, `${what}: ${answer.body}`);
      assert.deepEqual(Object.keys(JSON.parse(answer.body)).sort(), ['code', 'error']);
      assert.equal(answer.headers.connection, 'close', `${what}: the rest of the body is not waited for`);
    }

    // Room attachments: a caller who has not joined is refused before the 5 MiB arrive.
    const rooms = await roomsTenant();
    const room = await openRoom(rooms, 'bodies-owner');
    const outsider = await new HeldRequest(base, 'POST', `/api/v1/rooms/${room.id}/attachments`, {
      authorization: `Bearer ${endUserToken(rooms.product, { sub: 'bodies-outsider' })}`, 'content-type': 'image/png', 'content-length': 5 * MiB,
    }, pngBytes(2048)).within(2_000, 'a room attachment from an outsider');
    assert.equal(outsider.status, 404, outsider.body);
    assert.equal(JSON.parse(outsider.body).error.code, 'NOT_FOUND');
  });

  it('a declared length over the slot, or none, is refused before a byte is read', async () => {
    const video = mp4Bytes(40_000);
    const answer = await interviewUpload(video);
    const url = `/api/proof/interview/uploads/${answer.upload.id}`;
    const tooLong = await new HeldRequest(base, 'PUT', url, octets(answer.uploadToken, 64 * MiB), video.subarray(0, 1024)).within(2_000,
      'an interview answer declaring 64 MiB');
    assert.equal(tooLong.status, 413, tooLong.body);
    assert.equal(JSON.parse(tooLong.body).code, 'TOO_LARGE');

    const d = await startDraft(t);
    const image = pngBytes(100_000);
    const opened = (await openImage(d, image)).json().data as { upload: { id: string }; uploadToken: string };
    const part = `/api/proof/collect/drafts/${d.id}/uploads/${opened.upload.id}?part=1`;
    const overSlot = await new HeldRequest(base, 'PUT', part, octets(opened.uploadToken, 8 * MiB), image.subarray(0, 1024)).within(2_000,
      'a part declaring 8 MiB for a 64 KiB slot');
    assert.equal(overSlot.status, 413, overSlot.body);
    assert.equal(JSON.parse(overSlot.body).code, 'TOO_LARGE');

    const chunked = await new HeldRequest(base, 'PUT', part, { 'x-upload-token': opened.uploadToken, 'content-type': 'application/octet-stream',
      'transfer-encoding': 'chunked' },
    image.subarray(0, 1024)).within(2_000, 'a part without a Content-Length');
    assert.equal(chunked.status, 400, chunked.body);
    assert.equal(JSON.parse(chunked.body).code, 'INVALID_INPUT');
    assert.equal((await customerCall({ method: 'GET', url: `/api/proof/collect/drafts/${d.id}/uploads/${opened.upload.id}`,
      headers: { 'x-upload-token': opened.uploadToken } }))
      .json().data.upload.receivedParts.length, 0, 'nothing was stored');
  });

  it('a valid answer streams into the media store while it arrives; the stored bytes and their sha256 are the sent ones', async () => {
    const video = mp4Bytes(3 * MiB);
    const answer = await interviewUpload(video);
    const mediaId = `med_${answer.upload.id.slice(answer.upload.id.indexOf('_') + 1)}`;
    const folder = path.join(ctx.config.dataDir, 'media', 'media', t.organizationId);
    const sending = new HeldRequest(base, 'PUT', `/api/proof/interview/uploads/${answer.upload.id}`, octets(answer.uploadToken, video.length),
      video.subarray(0, MiB));
    // Half the body is still owed; the first megabyte is already being written beside its key.
    const deadline = Date.now() + 5_000;
    let written = 0;
    while (written < 512 * 1024 && Date.now() < deadline) {
      const temps = fs.existsSync(folder) ? fs.readdirSync(folder).filter((f) => f.startsWith(`${mediaId}.`) && f.endsWith('.tmp')) : [];
      written = temps.reduce((n, f) => n + fs.statSync(path.join(folder, f)).size, 0);
      if (written < 512 * 1024) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(written >= 512 * 1024, `bytes reach the store before the body ends (saw ${written})`);
    await sending.write(video.subarray(MiB));
    sending.end();
    const stored = await sending.within(10_000, 'the rest of the answer');
    assert.equal(stored.status, 201, stored.body);
    const media = JSON.parse(stored.body).data.media;
    assert.deepEqual([media.size, media.sha256, media.contentType], [video.length, sha256(video), 'video/mp4']);
    const onDisk = fs.readFileSync(path.join(folder, mediaId));
    assert.equal(sha256(onDisk), sha256(video), 'the bytes in the store are the sent ones');
    assert.deepEqual(fs.readdirSync(folder).filter((f) => f.endsWith('.tmp')), [], 'no half-written file is left');

    // A part over a real socket lands in the store with the sha256 the answer names.
    const d = await startDraft(t);
    const image = pngBytes(100_000);
    const opened = (await openImage(d, image)).json().data as { upload: { id: string }; uploadToken: string };
    const put = new HeldRequest(base, 'PUT', `/api/proof/collect/drafts/${d.id}/uploads/${opened.upload.id}?part=1`, octets(opened.uploadToken, PART),
      image.subarray(0, PART));
    put.end();
    const part = await put.within(5_000, 'a part');
    assert.equal(part.status, 200, part.body);
    assert.equal(JSON.parse(part.body).data.sha256, sha256(image.subarray(0, PART)));
    assert.equal(sha256(fs.readFileSync(path.join(ctx.config.dataDir, 'media', 'uploads', opened.upload.id, 'part-1'))), sha256(image.subarray(0, PART)));
  });

  it('quotas: a draft holds at most PROOF_UPLOAD_DRAFT_MAX_BYTES (413); a form and a client address open at most their daily bytes (429)', async () => {
    const image = pngBytes(100_000);
    const perDraft = await ctx.buildApp({ uploadQuotas: { draftBytes: 150_000, flowDailyBytes: 1024 * MiB, addressDailyBytes: 1024 * MiB } });
    const d = await startDraft(t, perDraft);
    const first = await openImage(d, image, perDraft, '198.51.100.1');
    assert.equal(first.statusCode, 201, first.body);
    const second = await openImage(d, image, perDraft, '198.51.100.1');
    assert.equal(second.statusCode, 413, second.body);
    assert.equal(second.json().code, 'TOO_LARGE');
    const firstUpload = first.json().data;
    assert.equal((await customerCall({
      method: 'DELETE', url: `/api/proof/collect/drafts/${d.id}/uploads/${firstUpload.upload.id}`, headers: { 'x-upload-token': firstUpload.uploadToken },
    }, perDraft)).statusCode, 204);
    assert.equal((await openImage(d, image, perDraft, '198.51.100.1')).statusCode, 201, 'a cancelled upload holds nothing');

    const fresh = await createCollectionTenant();
    const perFlow = await ctx.buildApp({ uploadQuotas: { draftBytes: 1024 * MiB, flowDailyBytes: 150_000, addressDailyBytes: 1024 * MiB } });
    assert.equal((await openImage(await startDraft(fresh, perFlow), image, perFlow, '198.51.100.2')).statusCode, 201);
    const flowFull = await openImage(await startDraft(fresh, perFlow), image, perFlow, '198.51.100.3');
    assert.equal(flowFull.statusCode, 429, flowFull.body);
    assert.equal(flowFull.json().code, 'RATE_LIMITED');
    assert.ok(Number(flowFull.headers['retry-after']) > 0 && Number(flowFull.headers['retry-after']) <= 86_400, 'retry at the next UTC day');
    const another = await createCollectionTenant();
    assert.equal((await openImage(await startDraft(another, perFlow), image, perFlow, '198.51.100.3')).statusCode, 201, 'another form has its own bytes');

    const perAddress = await ctx.buildApp({ uploadQuotas: { draftBytes: 1024 * MiB, flowDailyBytes: 1024 * MiB, addressDailyBytes: 150_000 } });
    assert.equal((await openImage(await startDraft(t, perAddress), image, perAddress, '198.51.100.4')).statusCode, 201);
    const addressFull = await openImage(await startDraft(fresh, perAddress), image, perAddress, '198.51.100.4');
    assert.equal(addressFull.statusCode, 429, addressFull.body);
    assert.equal(addressFull.json().code, 'RATE_LIMITED');
    assert.equal((await openImage(await startDraft(fresh, perAddress), image, perAddress, '198.51.100.5')).statusCode, 201,
      'another address has its own bytes');
    const made = await as(t.owner, { method: 'POST', url: '/api/workspace/proof/interviews',
      payload: { productId: t.product.id, questions: [{ text: 'And then?' }] } });
    const recorded = await customerCall({
      method: 'POST', url: '/api/proof/interview', headers: { 'x-interview-token': made.json().data.interviewToken }, remoteAddress: '198.51.100.4',
      payload: { action: 'start_upload', questionId: 'q1', size: image.length, sha256: sha256(image) },
    }, perAddress);
    assert.equal(recorded.statusCode, 429, 'a recorded interview answer counts against the same address');

    // An IPv6 client is its /64: rotating addresses inside it gains nothing; another /64 is another client.
    assert.equal((await openImage(await startDraft(t, perAddress), image, perAddress, '2001:db8:7:1::1')).statusCode, 201);
    const rotated = await openImage(await startDraft(fresh, perAddress), image, perAddress, '2001:db8:7:1:ffff:ffff:ffff:fffe');
    assert.equal(rotated.statusCode, 429, rotated.body);
    assert.equal((await openImage(await startDraft(fresh, perAddress), image, perAddress, '2001:db8:7:2::1')).statusCode, 201);
  });

  it('an unsubmitted draft\'s media are erased after PROOF_UNSUBMITTED_MEDIA_TTL_MS, its text kept; a submitted draft\'s media stay', async () => {
    const complete = async (d: OpenDraft) => {
      const image = pngBytes(100_000);
      const { upload, uploadToken } = (await openImage(d, image)).json().data;
      for (const n of [1, 2]) {
        const res = await customerCall({
          method: 'PUT', url: `/api/proof/collect/drafts/${d.id}/uploads/${upload.id}?part=${n}`, payload: image.subarray((n - 1) * PART, n * PART),
          headers: { 'x-upload-token': uploadToken, 'content-type': 'application/octet-stream' },
        });
        assert.equal(res.statusCode, 200, res.body);
      }
      const done = await customerCall({ method: 'POST', url: `/api/proof/collect/drafts/${d.id}/uploads/${upload.id}`,
        headers: { 'x-upload-token': uploadToken } });
      assert.equal(done.statusCode, 200, done.body);
      const [media] = await ctx.dataSource.query(`SELECT id, storage_key FROM collection_media WHERE id = $1`, [done.json().data.upload.assetId]);
      return { uploadId: upload as { id: string }, token: uploadToken as string, file: path.join(ctx.config.dataDir, 'media', media.storage_key),
        mediaId: media.id as string };
    };
    const left = await startDraft(t);
    await fillDraft(t, left);
    const leftMedia = await complete(left);
    const open = await startDraft(t);
    const openUpload = (await openImage(open, pngBytes(100_000))).json().data;
    assert.equal((await customerCall({
      method: 'PUT', url: `/api/proof/collect/drafts/${open.id}/uploads/${openUpload.upload.id}?part=1`, payload: pngBytes(100_000).subarray(0, PART),
      headers: { 'x-upload-token': openUpload.uploadToken, 'content-type': 'application/octet-stream' },
    })).statusCode, 200);
    const openPart = path.join(ctx.config.dataDir, 'media', 'uploads', openUpload.upload.id, 'part-1');
    const sent = await startDraft(t);
    await fillDraft(t, sent);
    const sentMedia = await complete(sent);
    assert.equal((await submitDraft(sent)).statusCode, 201);
    const recent = await startDraft(t);
    const recentMedia = await complete(recent);

    // Two hours without a change, against a window of one hour: only those drafts' uploads are old enough.
    const aged = [left.id, open.id, sent.id];
    await ctx.dataSource.query(`UPDATE collection_drafts SET updated_at = now() - interval '2 hours' WHERE id = ANY($1)`, [aged]);
    await ctx.dataSource.query(`UPDATE collection_uploads SET updated_at = now() - interval '2 hours' WHERE draft_id = ANY($1)`, [aged]);
    // Text that keeps changing keeps no media past the window: only the upload's own age counts.
    await ctx.dataSource.query(`UPDATE collection_drafts SET updated_at = now() WHERE id = $1`, [left.id]);
    const activities = createCollectionActivities({ dataSource: ctx.dataSource, config: { ...ctx.config, unsubmittedMediaTtlMs: 3_600_000 } });
    const counts = await activities.sweepExpiredDrafts();
    assert.ok(counts.unsubmittedUploads >= 2, JSON.stringify(counts));

    assert.ok(!fs.existsSync(leftMedia.file), 'the unsubmitted draft\'s original is erased from the store');
    assert.ok(!fs.existsSync(openPart), 'and so is an open upload\'s part');
    const [media] = await ctx.dataSource.query(`SELECT erased_at FROM collection_media WHERE id = $1`, [leftMedia.mediaId]);
    assert.notEqual(media.erased_at, null);
    const [{ n }] = await ctx.dataSource.query(`SELECT count(*)::int AS n FROM collection_upload_parts WHERE upload_id = $1`, [openUpload.upload.id]);
    assert.equal(n, 0);
    const statuses = await ctx.dataSource.query(`SELECT id, status FROM collection_uploads WHERE draft_id = ANY($1) ORDER BY id`, [[left.id, open.id]]);
    assert.deepEqual(statuses.map((u: { status: string }) => u.status).sort(), ['cancelled', 'expired']);
    for (const u of statuses) {
      const signalled = await ctx.dataSource.query(
        `SELECT 1 FROM workflow_commands WHERE ordering_key = $1 AND command->>'type' = 'collection.upload.cancel'`, [`upload/${u.id}`]);
      assert.equal(signalled.length, 1, 'the upload\'s workflow is told to end');
    }
    const resumed = await customerCall(asDraft(left, { method: 'GET', url: `/api/proof/collect/drafts/${left.id}` }));
    assert.equal(resumed.statusCode, 200, 'the draft itself lives on');
    assert.equal(resumed.json().data.draft.text, 'Onboarding went from nine days to two.', 'its text stays until the draft\'s own lifetime');

    assert.ok(fs.existsSync(sentMedia.file), 'a submitted draft\'s media are kept');
    assert.ok(fs.existsSync(recentMedia.file), 'a draft changed within the window keeps its media');
  });
});

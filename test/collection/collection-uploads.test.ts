import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import crypto, { randomBytes } from 'node:crypto';
import { FastifyInstance } from 'fastify';
import { maintenanceWorkflow } from '../../workflows/platform/maintenance-workflow';
import { approve, eventually, publishedPlacement, requestApproval } from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import {
  CollectionTenant, OpenDraft, asDraft, createCollectionTenant, customerCall, fillDraft, pngBytes, sha256, startDraft, submitDraft, wavBytes,
} from '../support/collection';
import { FAKE_VTT } from '../support/fake-ai';
import { withinOneMinuteWindow } from '../support/fixtures';
import { route } from '../support/routes';

const PART = 64 * 1024;

describe('collection: resumable uploads (upload/<sessionId>)', () => {
  let t: CollectionTenant;
  before(async () => {
    t = await createCollectionTenant();
  });

  async function open(d: OpenDraft, file: Buffer, extra: object = {}, app?: FastifyInstance) {
    const res = await customerCall(asDraft(d, {
      method: 'POST', url: `/api/proof/collect/drafts/${d.id}/uploads`,
      payload: { kind: 'image', size: file.length, sha256: sha256(file), partSize: PART, ...extra },
    }), app);
    assert.equal(res.statusCode, 201, res.body);
    return { id: res.json().data.upload.id as string, token: res.json().data.uploadToken as string, upload: res.json().data.upload };
  }
  const partOf = (file: Buffer, n: number) => file.subarray((n - 1) * PART, n * PART);
  const put = (d: OpenDraft, u: { id: string; token: string }, n: number, bytes: Buffer, headers: Record<string, string> = {}, app?: FastifyInstance) =>
    customerCall({
      method: 'PUT', url: `/api/proof/collect/drafts/${d.id}/uploads/${u.id}?part=${n}`, payload: bytes,
      headers: { 'x-upload-token': u.token, 'content-type': 'application/octet-stream', ...headers },
    }, app);
  const call = (d: OpenDraft, u: { id: string; token: string }, method: 'GET' | 'POST' | 'DELETE', app?: FastifyInstance) =>
    customerCall({ method, url: `/api/proof/collect/drafts/${d.id}/uploads/${u.id}`, headers: { 'x-upload-token': u.token } }, app);

  it('takes parts in any order, resumes across an API restart, assembles, previews with t= and ranges', async () => {
    const d = await startDraft(t);
    const file = pngBytes(300_000);
    const first = await ctx.buildApp();
    const u = await open(d, file, {}, first);
    assert.equal(u.upload.partCount, 5);
    assert.equal((await put(d, u, 3, partOf(file, 3), {}, first)).statusCode, 200);
    assert.equal((await put(d, u, 1, partOf(file, 1), { 'x-part-sha256': sha256(partOf(file, 1)) }, first)).statusCode, 200);
    await first.close();

    const second = await ctx.buildApp();
    const state = await call(d, u, 'GET', second);
    assert.equal(state.statusCode, 200, state.body);
    assert.deepEqual(state.json().data.upload.receivedParts.map((p: { number: number }) => p.number), [1, 3]);
    for (const n of [5, 2, 4]) assert.equal((await put(d, u, n, partOf(file, n), {}, second)).statusCode, 200);
    const assembled = await call(d, u, 'POST', second);
    assert.equal(assembled.statusCode, 200, assembled.body);
    const upload = assembled.json().data.upload;
    assert.equal(upload.status, 'complete');
    assert.equal(upload.contentType, 'image/png');
    assert.match(upload.assetId, /^med_/);
    assert.equal(upload.receivedBytes, file.length, 'a complete upload has received the whole file');
    assert.equal((await call(d, u, 'GET', second)).json().data.upload.receivedBytes, file.length);
    const [media] = await ctx.dataSource.query(`SELECT * FROM collection_media WHERE id = $1`, [upload.assetId]);
    assert.equal(media.sha256, sha256(file));
    assert.ok(!('body' in media), 'no bytes in PostgreSQL');
    assert.ok(fs.existsSync(path.join(ctx.config.dataDir, 'media', media.storage_key)));
    assert.equal((await call(d, u, 'POST', second)).statusCode, 200, 'assemble is idempotent');

    const preview = await customerCall({ method: 'GET', url: upload.previewUrl, headers: { range: 'bytes=0-7' } }, second);
    assert.equal(preview.statusCode, 206, preview.body);
    assert.deepEqual(preview.rawPayload, file.subarray(0, 8));
    assert.equal(preview.headers['cache-control'], 'no-store');
    assert.equal(preview.headers['x-content-type-options'], 'nosniff');
    const whole = await customerCall({ method: 'GET', url: upload.previewUrl }, second);
    assert.equal(sha256(whole.rawPayload), sha256(file));
    const forged = await customerCall({ method: 'GET', url: upload.previewUrl.replace(/t=[^&]+/, `t=${u.id}.9999999999.AAAA`) }, second);
    assert.equal(forged.statusCode, 401);

    // Submitting with the complete recording attaches it.
    await fillDraft(t, d);
    const submitted = await submitDraft(d, second);
    assert.equal(submitted.statusCode, 201, submitted.body);
    const [item] = await ctx.dataSource.query(`SELECT i.type, v.content FROM proof_items i JOIN proof_versions v ON v.id = i.original_version_id WHERE i.id = $1`,
      [submitted.json().data.proofItemId]);
    assert.equal(item.type, 'image');
    assert.deepEqual(item.content.mediaAssetIds, [upload.assetId]);

    // Approved and placed, the image is served from the store as the placement's media; withdrawn, it is not.
    const proofItemId = submitted.json().data.proofItemId;
    assert.equal((await requestApproval(t, proofItemId, submitted.json().data.originalVersionId)).statusCode, 200);
    assert.equal((await approve(t, proofItemId, submitted.json().data.originalVersionId)).statusCode, 200);
    const placementId = await publishedPlacement(t, [proofItemId]);
    const manifest = (await customerCall({ method: 'GET', url: `/api/public/proof/render/${placementId}` }, second)).json().manifest;
    assert.deepEqual(manifest.items[0].media.map((m: { assetId: string }) => m.assetId), [upload.assetId]);
    const served = await customerCall({ method: 'GET', url: `/api/public/proof/media/${placementId}/${upload.assetId}` }, second);
    assert.equal(served.statusCode, 200);
    assert.equal(sha256(served.rawPayload), sha256(file));
    await customerCall({
      method: 'POST', url: '/api/proof/collect/control', headers: { 'x-control-token': submitted.json().data.controlToken },
      payload: { action: 'withdraw', proofItemId, confirm: true },
    }, second);
    assert.equal((await customerCall({ method: 'GET', url: `/api/public/proof/media/${placementId}/${upload.assetId}` }, second)).statusCode, 404);
    await second.close();
  });

  /** A complete audio recording of a fresh draft. */
  async function completeAudio(app?: FastifyInstance) {
    const d = await startDraft(t, app);
    const file = wavBytes(100_000);
    const u = await open(d, file, { kind: 'audio' }, app);
    for (const n of [1, 2]) assert.equal((await put(d, u, n, partOf(file, n), {}, app)).statusCode, 200);
    const done = await call(d, u, 'POST', app);
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().data.upload.contentType, 'audio/wav');
    return { d, u, upload: done.json().data.upload, url: `/api/proof/collect/drafts/${d.id}/uploads/${u.id}/captions` };
  }

  it('the preview t= MAC is compared in constant time; t twice is 400; t= previews count per client address and per upload, 429 before the MAC', async () => {
    const { upload } = await completeAudio();
    const { pathname, searchParams } = new URL(upload.previewUrl, 'http://collect.test');
    const t = searchParams.get('t')!;
    const [id, exp, mac] = t.split('.');
    const twice = await customerCall({ method: 'GET', url: `${pathname}?t=${t}&t=${t}` });
    assert.equal(twice.statusCode, 400, twice.body);
    assert.deepEqual(Object.keys(twice.json()).sort(), ['code', 'error']);
    assert.equal(twice.json().code, 'INVALID_INPUT');

    // A MAC of the right length but one wrong character goes through crypto.timingSafeEqual, never `===`.
    const forged = `${pathname}?t=${id}.${exp}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
    const compared: number[] = [];
    const timingSafeEqual = crypto.timingSafeEqual;
    crypto.timingSafeEqual = (a, b) => {
      compared.push(a.byteLength);
      return timingSafeEqual(a, b);
    };
    let refused;
    try {
      refused = await customerCall({ method: 'GET', url: forged });
    } finally {
      crypto.timingSafeEqual = timingSafeEqual;
    }
    assert.equal(refused.statusCode, 401, refused.body);
    assert.ok(compared.includes(Buffer.byteLength(mac)), `the MAC went through timingSafeEqual: ${compared.join(', ')}`);

    // Another upload, whose windows no other app has leased blocks of.
    const other = new URL((await completeAudio()).upload.previewUrl, 'http://collect.test');
    const [otherId, otherExp, otherMac] = other.searchParams.get('t')!.split('.');
    const guess = `${other.pathname}?t=${otherId}.${otherExp}.${otherMac.slice(0, -1)}${otherMac.endsWith('A') ? 'B' : 'A'}`;
    const limited = await ctx.buildApp({ rateLimitPerMinute: 2 });
    await withinOneMinuteWindow();
    const from = (address: string) => customerCall({ method: 'GET', url: guess, remoteAddress: address }, limited);
    const [a, b] = [`198.51.100.${randomBytes(1)[0] % 250 + 1}`, `2001:db8::${randomBytes(2).toString('hex')}`];
    assert.deepEqual([(await from(a)).statusCode, (await from(a)).statusCode], [401, 401]);
    const byAddress = await from(a);
    assert.equal(byAddress.statusCode, 429, 'the client address used its minute on guesses');
    assert.equal(byAddress.json().code, 'RATE_LIMITED');
    assert.ok(Number(byAddress.headers['retry-after']) >= 1);
    const byUpload = await from(b);
    assert.equal(byUpload.statusCode, 429, 'another address guessing at the same upload is refused too');
  });

  it('captions answer 503 UNAVAILABLE only while transcription is off', async () => {
    const off = await ctx.buildApp({ transcribeBaseUrl: undefined, transcribeModel: undefined });
    const { d, url, upload } = await completeAudio(off);
    const calls = [
      { method: 'GET' as const, url },
      { method: 'POST' as const, url, payload: {} },
      { method: 'PUT' as const, url, payload: { baseVersion: 0, cues: [{ startMs: 0, endMs: 900, text: 'Hello' }] } },
    ];
    for (const c of calls) {
      const res = await customerCall(asDraft(d, c), off);
      assert.equal(res.statusCode, 503, `${c.method} ${res.body}`);
      assert.equal(res.json().code, 'UNAVAILABLE');
      assert.equal((await customerCall(asDraft(d, c))).statusCode < 500, true, `${c.method} answers when transcription is on`);
    }
    const track = await customerCall({ method: 'GET', url: `${upload.previewUrl}&track=captions` }, off);
    assert.equal(track.statusCode, 503);
  });

  it('captions through the provider: 202 pending, then an automatic version; a correction is a new version; stale is 409', async () => {
    const { d, url, upload } = await completeAudio();
    const before = ctx.fakeAi.transcriptions.length;
    const empty = await customerCall(asDraft(d, { method: 'GET', url }));
    assert.equal(empty.statusCode, 200, empty.body);
    assert.deepEqual(empty.json().data, { status: 'none', versions: [], currentVtt: null });
    assert.equal((await customerCall({ method: 'GET', url: `${upload.previewUrl}&track=captions` })).statusCode, 409, 'no captions yet');

    const asked = await customerCall(asDraft(d, { method: 'POST', url, payload: {} }));
    assert.equal(asked.statusCode, 202, asked.body);
    assert.equal(asked.json().data.status, 'pending');
    const ready = await eventually(async () => {
      const res = await customerCall(asDraft(d, { method: 'GET', url }));
      return res.json().data.status === 'ready' ? res.json().data : null;
    });
    assert.ok(ready);
    assert.deepEqual(ready.versions.map((v: { version: number; source: string }) => [v.version, v.source]), [[1, 'automatic']]);
    assert.equal(ready.currentVtt, FAKE_VTT);
    const sent = ctx.fakeAi.transcriptions.slice(before);
    assert.equal(sent.length, 1);
    assert.deepEqual([sent[0].model, sent[0].responseFormat, sent[0].fileName, sent[0].fileBytes], ['fake-whisper', 'vtt', 'recording.wav', 100_000]);
    assert.equal((await customerCall(asDraft(d, { method: 'POST', url, payload: {} }))).statusCode, 200, 'a track exists');

    const corrected = await customerCall(asDraft(d, {
      method: 'PUT', url, payload: { baseVersion: 1, language: 'en', cues: [{ startMs: 0, endMs: 1200, text: 'We shipped in <two> days.' }] },
    }));
    assert.equal(corrected.statusCode, 201, corrected.body);
    assert.deepEqual(corrected.json().data.versions.map((v: { version: number; source: string }) => [v.version, v.source]),
      [[1, 'automatic'], [2, 'customer']]);
    assert.equal(corrected.json().data.currentVtt, 'WEBVTT\nLanguage: en\n\n00:00:00.000 --> 00:00:01.200\nWe shipped in &lt;two&gt; days.\n');
    const stale = await customerCall(asDraft(d, { method: 'PUT', url, payload: { baseVersion: 1, cues: [{ startMs: 0, endMs: 10, text: 'x' }] } }));
    assert.equal(stale.statusCode, 409);
    assert.equal(stale.json().code, 'CONFLICT');
    const backwards = await customerCall(asDraft(d, { method: 'PUT', url, payload: { baseVersion: 2, cues: [{ startMs: 10, endMs: 5, text: 'x' }] } }));
    assert.equal(backwards.statusCode, 400);

    const vtt = await customerCall({ method: 'GET', url: `${upload.previewUrl}&track=captions` });
    assert.equal(vtt.statusCode, 200);
    assert.match(String(vtt.headers['content-type']), /^text\/vtt/);
    assert.equal(vtt.headers['cache-control'], 'no-store');
    assert.equal(vtt.body, corrected.json().data.currentVtt);

    // Captions are for recordings, of open drafts.
    const image = await open(d, pngBytes(70_000));
    const notAudio = await customerCall(asDraft(d, { method: 'GET', url: `/api/proof/collect/drafts/${d.id}/uploads/${image.id}/captions` }));
    assert.equal(notAudio.statusCode, 409);
    const other = await startDraft(t);
    assert.equal((await customerCall(asDraft(other, { method: 'GET', url }))).statusCode, 404, 'another draft\'s session');
  });

  it('a provider that keeps failing leaves the track failed with no text; a later POST tries again', async () => {
    const { d, url } = await completeAudio();
    ctx.fakeAi.transcription = { status: 500 };
    try {
      assert.equal((await customerCall(asDraft(d, { method: 'POST', url, payload: {} }))).statusCode, 202);
      const failed = await eventually(async () => {
        const res = await customerCall(asDraft(d, { method: 'GET', url }));
        return res.json().data.status === 'failed' ? res.json().data : null;
      });
      assert.deepEqual(failed, { status: 'failed', versions: [], currentVtt: null });
    } finally {
      ctx.fakeAi.transcription = { vtt: FAKE_VTT };
    }
    assert.equal((await customerCall(asDraft(d, { method: 'POST', url, payload: {} }))).statusCode, 202);
    await eventually(async () => (await customerCall(asDraft(d, { method: 'GET', url }))).json().data.status === 'ready');
  });

  it('refuses a wrong part size, a bad part number and a part checksum that does not match', async () => {
    const d = await startDraft(t);
    const file = pngBytes(200_000);
    const u = await open(d, file);
    const short = await put(d, u, 2, partOf(file, 2).subarray(1));
    assert.equal(short.statusCode, 400);
    assert.equal(short.json().code, 'INVALID_INPUT');
    const long = await put(d, u, 2, Buffer.concat([partOf(file, 2), Buffer.from('x')]));
    assert.equal(long.statusCode, 413);
    assert.equal(long.json().code, 'TOO_LARGE');
    assert.equal((await put(d, u, 9, partOf(file, 2))).statusCode, 400);
    assert.equal((await put(d, u, 0, partOf(file, 2))).statusCode, 400);
    const wrongSha = await put(d, u, 2, partOf(file, 2), { 'x-part-sha256': '0'.repeat(64) });
    assert.equal(wrongSha.statusCode, 422);
    assert.equal(wrongSha.json().code, 'CHECKSUM_MISMATCH');
    const json = await customerCall({
      method: 'PUT', url: `/api/proof/collect/drafts/${d.id}/uploads/${u.id}?part=2`, payload: { a: 1 }, headers: { 'x-upload-token': u.token },
    });
    assert.equal(json.statusCode, 415);
    const missing = await call(d, u, 'POST');
    assert.equal(missing.statusCode, 409, 'parts missing');
  });

  it('a whole-file checksum mismatch is 422 and keeps the parts; corrected parts then assemble', async () => {
    const d = await startDraft(t);
    const file = pngBytes(150_000);
    const u = await open(d, file);
    const wrong = Buffer.from(partOf(file, 2));
    wrong[10] ^= 0xff;
    for (const [n, bytes] of [[1, partOf(file, 1)], [2, wrong], [3, partOf(file, 3)]] as Array<[number, Buffer]>) {
      assert.equal((await put(d, u, n, bytes)).statusCode, 200);
    }
    const mismatch = await call(d, u, 'POST');
    assert.equal(mismatch.statusCode, 422, mismatch.body);
    assert.equal(mismatch.json().code, 'CHECKSUM_MISMATCH');
    const state = (await call(d, u, 'GET')).json().data.upload;
    assert.equal(state.status, 'open');
    assert.equal(state.lastError, 'CHECKSUM_MISMATCH');
    assert.equal(state.receivedParts.length, 3, 'the parts are kept');
    assert.equal((await put(d, u, 2, partOf(file, 2))).statusCode, 200);
    const fixed = await call(d, u, 'POST');
    assert.equal(fixed.statusCode, 200, fixed.body);
    assert.equal(fixed.json().data.upload.status, 'complete');
  });

  it('sniffs the bytes: a declared image that is not one is 415; the kind decides what is accepted', async () => {
    const d = await startDraft(t);
    const fake = Buffer.concat([Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"></svg>'), randomBytes(70_000)]);
    const u = await open(d, fake);
    const refused = await put(d, u, 1, partOf(fake, 1));
    assert.equal(refused.statusCode, 415, refused.body);
    assert.equal(refused.json().code, 'UNSUPPORTED_MEDIA_TYPE');
    const png = pngBytes(70_000);
    const asVideo = await open(d, png, { kind: 'video' });
    assert.equal((await put(d, asVideo, 1, partOf(png, 1))).statusCode, 415, 'a PNG is not a video');
    const tooBig = await customerCall(asDraft(d, {
      method: 'POST', url: `/api/proof/collect/drafts/${d.id}/uploads`, payload: { kind: 'image', size: 16 * 1024 * 1024, sha256: sha256(png) },
    }));
    assert.equal(tooBig.statusCode, 413);
    const screen = await customerCall(asDraft(d, {
      method: 'POST', url: `/api/proof/collect/drafts/${d.id}/uploads`,
      payload: { kind: 'video', size: 1000, sha256: sha256(png), capture: { source: 'screen' } },
    }));
    assert.equal(screen.statusCode, 400, 'a screen recording needs screenConsent and the consent version');
    const otherVersion = await customerCall(asDraft(d, {
      method: 'POST', url: `/api/proof/collect/drafts/${d.id}/uploads`,
      payload: { kind: 'video', size: 1000, sha256: sha256(png), capture: { source: 'screen', screenConsent: true, consentVersionId: 'ctv_other000000000' } },
    }));
    assert.equal(otherVersion.statusCode, 409);
  });

  it('submit while an upload is open is 409; cancel erases the bytes and frees the submit', async () => {
    const d = await startDraft(t);
    await fillDraft(t, d);
    const file = pngBytes(100_000);
    const u = await open(d, file);
    assert.equal((await put(d, u, 1, partOf(file, 1))).statusCode, 200);
    const blocked = await submitDraft(d);
    assert.equal(blocked.statusCode, 409, blocked.body);
    const partFile = path.join(ctx.config.dataDir, 'media', 'uploads', u.id, 'part-1');
    assert.ok(fs.existsSync(partFile));
    assert.equal((await call(d, u, 'DELETE')).statusCode, 204);
    assert.equal((await call(d, u, 'DELETE')).statusCode, 204, 'a repeat is 204');
    await eventually(async () => !fs.existsSync(partFile));
    assert.equal((await put(d, u, 2, partOf(file, 2))).statusCode, 409, 'a cancelled upload takes no parts');
    assert.equal((await submitDraft(d)).statusCode, 201);
  });

  it('an upload past its lifetime answers 410, and its timer expires it', async () => {
    const app = await ctx.buildApp({ uploadTtlMs: 1_500 });
    const d = await startDraft(t, app);
    const file = pngBytes(70_000);
    const u = await open(d, file, {}, app);
    const [command] = await ctx.dataSource.query(`SELECT command FROM workflow_commands WHERE ordering_key = $1`, [`upload/${u.id}`]);
    assert.equal(command.command.type, 'collection.upload.start', 'the workflow start was written with the upload');
    await eventually(async () => {
      const [row] = await ctx.dataSource.query(`SELECT status FROM collection_uploads WHERE id = $1`, [u.id]);
      return row.status === 'expired';
    });
    const res = await put(d, u, 1, partOf(file, 1), {}, app);
    assert.equal(res.statusCode, 410);
    assert.equal(res.json().code, 'EXPIRED');
    assert.equal((await call(d, u, 'GET', app)).statusCode, 410);
  });
});

describe('collection: the expired-draft sweep (maintenance workflow)', () => {
  it('erases an idle draft: its fields, its uploads and their bytes in the media store; its session answers 410; a live draft is kept', async function () {
    this.timeout(60_000);
    const t = await createCollectionTenant();
    const idle = await startDraft(t);
    const live = await startDraft(t);
    await fillDraft(t, idle);
    const file = pngBytes(70_000);
    const opened = await customerCall(asDraft(idle, {
      method: 'POST', url: `/api/proof/collect/drafts/${idle.id}/uploads`, payload: { kind: 'image', size: file.length, sha256: sha256(file), partSize: PART },
    }));
    const upload = opened.json().data;
    const part = await customerCall({
      method: 'PUT', url: `/api/proof/collect/drafts/${idle.id}/uploads/${upload.upload.id}?part=1`, payload: file.subarray(0, PART),
      headers: { 'x-upload-token': upload.uploadToken, 'content-type': 'application/octet-stream' },
    });
    assert.equal(part.statusCode, 200, part.body);
    const partFile = path.join(ctx.config.dataDir, 'media', 'uploads', upload.upload.id, 'part-1');
    assert.ok(fs.existsSync(partFile));
    await ctx.dataSource.query(`UPDATE collection_drafts SET expires_at = now() - interval '1 second' WHERE id = $1`, [idle.id]);

    const handle = await ctx.temporal.workflow.start(maintenanceWorkflow, {
      workflowId: `maintenance-test/${idle.id}`, taskQueue: ctx.config.taskQueue, args: [{ intervalMs: 200 }],
    });
    try {
      await eventually(async () => {
        const [row] = await ctx.dataSource.query(`SELECT status FROM collection_drafts WHERE id = $1`, [idle.id]);
        return row.status === 'expired' && !fs.existsSync(partFile);
      }, 20_000);
    } finally {
      await handle.terminate('test done');
    }
    const [draft] = await ctx.dataSource.query(`SELECT fields FROM collection_drafts WHERE id = $1`, [idle.id]);
    assert.deepEqual(draft.fields, {}, 'what the customer wrote is erased');
    const [u] = await ctx.dataSource.query(`SELECT status FROM collection_uploads WHERE id = $1`, [upload.upload.id]);
    assert.equal(u.status, 'expired');
    const signalled = await ctx.dataSource.query(
      `SELECT 1 FROM workflow_commands WHERE ordering_key = $1 AND command->>'type' = 'collection.upload.cancel'`, [`upload/${upload.upload.id}`]);
    assert.equal(signalled.length, 1, 'the upload\'s workflow is signalled by its own id');
    const [{ n }] = await ctx.dataSource.query(`SELECT count(*)::int AS n FROM collection_upload_parts WHERE upload_id = $1`, [upload.upload.id]);
    assert.equal(n, 0);
    const again = await customerCall(asDraft(idle, { method: 'GET', url: `/api/proof/collect/drafts/${idle.id}` }));
    assert.equal(again.statusCode, 410, again.body);
    assert.equal(again.json().code, 'EXPIRED');
    const kept = await customerCall(asDraft(live, { method: 'GET', url: `/api/proof/collect/drafts/${live.id}` }));
    assert.equal(kept.statusCode, 200);
  });
});

describe('collection: welcome video serving rules', () => {
  it('serves only a passed or cleared video that the live flow\'s latest version references', async () => {
    const t = await createCollectionTenant();
    const bytes = pngBytes(5_000);
    const mediaId = `med_${randomBytes(10).toString('hex')}`;
    const key = `media/${t.organizationId}/${mediaId}`;
    fs.mkdirSync(path.dirname(path.join(ctx.config.dataDir, 'media', key)), { recursive: true });
    fs.writeFileSync(path.join(ctx.config.dataDir, 'media', key), bytes);
    await ctx.dataSource.query(
      `INSERT INTO collection_media (id, organization_id, product_id, upload_id, kind, content_type, size, sha256, storage_key)
       VALUES ($1, $2, $3, $4, 'video', 'video/mp4', $5, $6, $7)`, [mediaId, t.organizationId, t.product.id, `ups_${mediaId}`, bytes.length, sha256(bytes),
        key]);
    const videoId = `wv_${randomBytes(10).toString('hex')}`;
    await ctx.dataSource.query(
      `INSERT INTO collection_welcome_videos (id, organization_id, product_id, flow_id, media_id, state, size, sha256)
       VALUES ($1, $2, $3, $4, $5, 'held', $6, $7)`, [videoId, t.organizationId, t.product.id, t.flowId, mediaId, bytes.length, sha256(bytes)]);
    const get = (headers: Record<string, string> = {}) => customerCall({ method: 'GET', url: route('/api/proof/collect/welcome/{videoId}', { videoId }),
      headers });
    assert.equal((await get()).statusCode, 404, 'held');
    await ctx.dataSource.query(`UPDATE collection_welcome_videos SET state = 'cleared' WHERE id = $1`, [videoId]);
    assert.equal((await get()).statusCode, 404, 'not referenced by the live version');
    await ctx.dataSource.query(`UPDATE collection_flow_versions SET definition = definition || jsonb_build_object('welcomeVideoId', $2::text) WHERE id = $1`,
      [t.flowVersionId, videoId]);
    const whole = await get();
    assert.equal(whole.statusCode, 200, whole.body);
    assert.equal(sha256(whole.rawPayload), sha256(bytes));
    const part = await get({ range: 'bytes=0-9' });
    assert.equal(part.statusCode, 206);
    assert.deepEqual(part.rawPayload, bytes.subarray(0, 10));
    await ctx.dataSource.query(`UPDATE collection_flows SET state = 'paused' WHERE id = $1`, [t.flowId]);
    assert.equal((await get()).statusCode, 404, 'the flow is not live');
  });
});

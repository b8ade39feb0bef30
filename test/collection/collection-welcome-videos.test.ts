import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Tenant, call, createTenant, eventually, sessionFor, settledHandle, withKey } from '../support/fixtures';
import { as, liveFlow } from '../support/collection-setup';
import { customerCall, sha256 } from '../support/collection';
import { ctx } from '../support/root-hooks';
import { uploadWorkflowId } from '../../workflows/workflow-ids';
import { route } from '../support/routes';

const PART = 64 * 1024;

/** Bytes file-type reads as MP4 video: an `ftyp` box with the isom brand, then anything. */
function mp4Bytes(size: number): Buffer {
  const ftyp = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom', 'latin1'), Buffer.from([0, 0, 2, 0]), Buffer.from('isommp41', 'latin1')]);
  return Buffer.concat([ftyp, randomBytes(size - ftyp.length)]);
}

describe('collection setup: welcome videos (upload/<sessionId>, held until a person clears it)', () => {
  let t: Tenant;
  let flowId: string;

  const base = () => route('/api/proof/collect/forms/{id}/welcome-video', { id: flowId });
  const videoUrl = (videoId: string, query = '') => route('/api/proof/collect/forms/{id}/welcome-video/{videoId}', { id: flowId, videoId }, query);
  const start = (file: Buffer, s = t.owner) => as(s, { method: 'POST', url: base(),
    payload: { action: 'start_upload', size: file.length, sha256: sha256(file), partSize: PART } });
  const put = (videoId: string, token: string, n: number, bytes: Buffer) => customerCall({
    method: 'PUT', url: videoUrl(videoId, `?part=${n}`), payload: bytes,
    headers: { 'x-upload-token': token, 'content-type': 'application/octet-stream' },
  });
  const sendAll = async (videoId: string, token: string, file: Buffer) => {
    for (let n = 1; n <= Math.ceil(file.length / PART); n++) {
      const res = await put(videoId, token, n, file.subarray((n - 1) * PART, n * PART));
      assert.equal(res.statusCode, 200, res.body);
    }
  };
  const assemble = (videoId: string) => as(t.owner, { method: 'POST', url: videoUrl(videoId), payload: {} });
  const review = (videoId: string, decision: string) => as(t.owner, { method: 'POST', url: base(), payload: { action: 'review', videoId, decision } });
  const served = (videoId: string, headers: Record<string, string> = {}) =>
    customerCall({ method: 'GET', url: route('/api/proof/collect/welcome/{videoId}', { videoId }), headers });
  const publish = async () => {
    const flow = (await as(t.owner, { method: 'GET', url: `/api/proof/collect/forms/${flowId}` })).json().data;
    return as(t.owner, { method: 'POST', url: `/api/proof/collect/forms/${flowId}`, payload: { draftRevision: flow.draftRevision } });
  };

  before(async () => {
    t = await createTenant();
    flowId = (await liveFlow(t)).flow.id;
  });

  it('uploads in parts through the upload workflow and media store, is held, served with ranges only once cleared and live, removal stops it', async () => {
    const file = mp4Bytes(200_000);
    const started = await start(file);
    assert.equal(started.statusCode, 201, started.body);
    const { video, upload, uploadToken } = started.json().data;
    assert.equal(video.state, 'uploading');
    assert.equal(upload.partCount, 4);
    assert.match(uploadToken, /^ut_[A-Za-z0-9_-]{43}$/);
    const [row] = await ctx.dataSource.query('SELECT draft_id, purpose FROM collection_uploads WHERE id = $1', [upload.id]);
    assert.deepEqual(row, { draft_id: null, purpose: 'welcome_video' });
    const [secret] = await ctx.dataSource.query('SELECT digest FROM collection_secrets WHERE upload_id = $1', [upload.id]);
    assert.equal(secret.digest, sha256(Buffer.from(uploadToken)), 'the upload token is stored only as its hash');
    const run = await (await settledHandle(uploadWorkflowId(upload.id))).describe();
    assert.deepEqual(run.memo, { organizationId: t.organizationId, productId: t.product.id });

    await sendAll(video.id, uploadToken, file);
    const state = await as(t.owner, { method: 'GET', url: videoUrl(video.id) });
    assert.equal(state.json().data.upload.receivedBytes, file.length, 'resume state');
    const assembled = await assemble(video.id);
    assert.equal(assembled.statusCode, 200, assembled.body);
    assert.equal(assembled.json().data.video.state, 'held', 'no moderation provider: held for a person');
    assert.equal(assembled.json().data.upload.contentType, 'video/mp4');
    const [media] = await ctx.dataSource.query('SELECT sha256 FROM collection_media WHERE id = $1', [assembled.json().data.video.mediaId]);
    assert.equal(media.sha256, sha256(file));
    assert.equal((await served(video.id)).statusCode, 404, 'held: never served');
    const refused = await publish();
    assert.equal(refused.statusCode, 400, 'the attached video must be cleared before publishing');
    assert.match(refused.body, /welcomeVideoId/);

    const cleared = await review(video.id, 'clear');
    assert.equal(cleared.statusCode, 200, cleared.body);
    assert.equal(cleared.json().data.video.state, 'cleared');
    assert.equal((await review(video.id, 'block')).statusCode, 409, 'only a held video is reviewed');
    assert.equal((await served(video.id)).statusCode, 404, 'cleared but not yet in the live version');
    assert.equal((await publish()).statusCode, 201);

    const whole = await served(video.id);
    assert.equal(whole.statusCode, 200);
    assert.equal(whole.headers['content-type'], 'video/mp4');
    assert.ok(whole.rawPayload.equals(file));
    const part = await served(video.id, { range: 'bytes=100-199' });
    assert.equal(part.statusCode, 206);
    assert.equal(part.headers['content-range'], `bytes 100-199/${file.length}`);
    assert.ok(part.rawPayload.equals(file.subarray(100, 200)));

    assert.equal((await as(t.owner, { method: 'DELETE', url: base() })).statusCode, 204);
    assert.equal((await served(video.id)).statusCode, 404, 'removed: no longer served');
    const mediaId = assembled.json().data.video.mediaId;
    await eventually(async () => (await ctx.dataSource.query('SELECT erased_at FROM collection_media WHERE id = $1', [mediaId]))[0].erased_at, 30_000);
  });

  it('a blocked video is never served; a wrong file is refused; the token is bound to its own video', async () => {
    const file = mp4Bytes(70_000);
    const { video, uploadToken } = (await start(file)).json().data;
    const other = (await start(mp4Bytes(70_000))).json().data;
    assert.equal((await put(other.video.id, uploadToken, 1, file.subarray(0, PART))).statusCode, 404, 'another video\'s token');
    assert.equal((await put(video.id, 'ut_' + 'A'.repeat(43), 1, file.subarray(0, PART))).statusCode, 401);
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(PART - 8)]);
    assert.equal((await put(video.id, uploadToken, 1, png)).statusCode, 415, 'part 1 must be a video');
    await sendAll(video.id, uploadToken, file);
    assert.equal((await assemble(video.id)).json().data.video.state, 'held');
    assert.equal((await review(video.id, 'block')).json().data.video.state, 'blocked');
    assert.equal((await served(video.id)).statusCode, 404);
    const listed = (await as(t.owner, { method: 'GET', url: base() })).json().data;
    assert.ok(listed.some((v: { id: string; state: string }) => v.id === video.id && v.state === 'blocked'));
  });

  it('refusals: roles, keys, tenants, body shape, size', async () => {
    const file = mp4Bytes(70_000);
    const member = await sessionFor(t.organizationId, 'member');
    assert.equal((await start(file, member)).statusCode, 403);
    assert.equal((await as(member, { method: 'GET', url: base() })).statusCode, 200, 'members read');
    assert.equal((await call(withKey(t.key, { method: 'GET', url: base() }))).statusCode, 403);
    const stranger = await createTenant();
    assert.equal((await start(file, stranger.owner)).statusCode, 404);
    const { video } = (await start(file)).json().data;
    assert.equal((await as(stranger.owner, { method: 'GET', url: videoUrl(video.id) })).statusCode, 404);
    assert.equal((await as(stranger.owner, { method: 'POST', url: base(), payload: { action: 'review', videoId: video.id, decision: 'clear' } })).statusCode,
      404);
    assert.equal((await as(t.owner, { method: 'POST', url: base(), payload: { action: 'start_upload', size: 10 } })).statusCode, 400);
    assert.equal((await as(t.owner, { method: 'POST', url: base(), payload: { action: 'review', videoId: video.id, decision: 'clear', size: 3 } })).statusCode,
      400);
    const huge = await as(t.owner, { method: 'POST', url: base(), payload: { action: 'start_upload', size: 600 * 1024 * 1024, sha256: sha256(file) } });
    assert.equal(huge.statusCode, 413);
    assert.equal((await assemble(video.id)).statusCode, 409, 'parts missing');
  });
});

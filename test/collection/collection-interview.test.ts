import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sha256Hex } from '../../db/rules/secrets';
import { asTeammate, call, createTenant, sessionFor } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { CollectionTenant, asDraft, createCollectionTenant, customerCall, mp4Bytes, pngBytes, sha256, startDraft } from '../support/collection';

describe('collection: asynchronous interviews (/api/proof/interview)', () => {
  let t: CollectionTenant;
  before(async () => {
    t = await createCollectionTenant();
  });

  const create = (payload: object, s = t.owner) =>
    call(asTeammate(s, { method: 'POST', url: '/api/workspace/proof/interviews', payload }));
  const asCustomer = (token: string, opts: { method: 'GET' | 'POST'; payload?: object }) =>
    customerCall({ ...opts, url: '/api/proof/interview', headers: { 'x-interview-token': token } });
  const putAnswer = (upload: { id: string }, token: string, bytes: Buffer, type = 'application/octet-stream') => customerCall({
    method: 'PUT', url: `/api/proof/interview/uploads/${upload.id}`, payload: bytes, headers: { 'x-upload-token': token, 'content-type': type },
  });
  async function interview() {
    const res = await create({ productId: t.product.id, personRef: 'cus-ada',
      questions: [{ text: 'What was it like before?' }, { text: 'Show us the result.' }] });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().data as { interview: { id: string; questions: Array<{ id: string; text: string }> }; interviewToken: string; interviewUrl: string };
  }

  it('a teammate makes an interview; its link secret is shown once and stored as a hash; members and other workspaces cannot', async () => {
    const made = await interview();
    assert.match(made.interviewToken, /^iv_[A-Za-z0-9_-]{43}$/);
    assert.equal(made.interviewUrl, `${ctx.config.collectPageUrl}/interview#${made.interviewToken}`);
    assert.deepEqual(made.interview.questions.map((q) => q.id), ['q1', 'q2']);
    const [secret] = await ctx.dataSource.query(`SELECT digest, kind FROM collection_secrets WHERE interview_id = $1`, [made.interview.id]);
    assert.deepEqual(secret, { digest: sha256Hex(made.interviewToken), kind: 'interview' });

    const member = await sessionFor(t.organizationId, 'member');
    assert.equal((await create({ productId: t.product.id, questions: [{ text: 'Why?' }] }, member)).statusCode, 403);
    const other = await createTenant();
    assert.equal((await create({ productId: other.product.id, questions: [{ text: 'Why us?' }] })).statusCode, 404, 'another workspace\'s product');
    assert.equal((await create({ productId: t.product.id, questions: [] })).statusCode, 400);
    assert.equal((await create({ productId: t.product.id, proofItemId: 'pi_unknown0000', questions: [{ text: 'Why us?' }] })).statusCode, 404);
  });

  it('the customer answers by text and by a recorded answer sent once, then finishes', async () => {
    const { interview: made, interviewToken: token } = await interview();
    const read = await asCustomer(token, { method: 'GET' });
    assert.equal(read.statusCode, 200, read.body);
    assert.deepEqual(read.json().data.interview.questions.map((q: { answer: unknown }) => q.answer), [null, null]);

    const answered = await asCustomer(token, { method: 'POST', payload: { questionId: 'q1', text: 'We copied spreadsheets for days.' } });
    assert.equal(answered.statusCode, 200, answered.body);
    assert.deepEqual(answered.json().data.interview.questions[0].answer, { text: 'We copied spreadsheets for days.', mediaId: null });
    assert.equal((await asCustomer(token, { method: 'POST', payload: { questionId: 'q9', text: 'x' } })).statusCode, 400, 'not a question');
    assert.equal((await asCustomer(token, { method: 'POST', payload: { action: 'finish', text: 'x' } })).statusCode, 400, 'mixed shapes');

    const video = mp4Bytes(40_000);
    const opened = await asCustomer(token, { method: 'POST', payload: { action: 'start_upload', questionId: 'q2', size: video.length,
      sha256: sha256(video) } });
    assert.equal(opened.statusCode, 201, opened.body);
    const { upload, uploadToken } = opened.json().data;
    assert.match(uploadToken, /^ut_/);
    assert.equal((await putAnswer(upload, uploadToken, video, 'text/plain')).statusCode, 415);
    const wrong = Buffer.from(video);
    wrong[wrong.length - 1] ^= 1;
    const mismatch = await putAnswer(upload, uploadToken, wrong);
    assert.equal(mismatch.statusCode, 422);
    assert.equal(mismatch.json().code, 'CHECKSUM_MISMATCH');
    assert.equal((await putAnswer(upload, uploadToken, video.subarray(1))).statusCode, 400, 'fewer bytes than opened for');
    const stored = await putAnswer(upload, uploadToken, video);
    assert.equal(stored.statusCode, 201, stored.body);
    const media = stored.json().data.media;
    assert.match(media.id, /^med_/);
    assert.equal(media.contentType, 'video/mp4');
    const [row] = await ctx.dataSource.query(`SELECT storage_key FROM collection_media WHERE id = $1`, [media.id]);
    assert.ok(fs.existsSync(path.join(ctx.config.dataDir, 'media', row.storage_key)), 'the bytes are in the media store');
    const again = await putAnswer(upload, uploadToken, video);
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().code, 'ALREADY_USED');
    const withMedia = await asCustomer(token, { method: 'GET' });
    assert.equal(withMedia.json().data.interview.questions[1].answer.mediaId, media.id);

    // An image is not a recorded answer.
    const image = pngBytes(20_000);
    const imageUpload = (await asCustomer(token, { method: 'POST', payload: { action: 'start_upload', questionId: 'q2', size: image.length,
      sha256: sha256(image) } })).json().data;
    const refused = await putAnswer(imageUpload.upload, imageUpload.uploadToken, image);
    assert.equal(refused.statusCode, 415);
    assert.equal(refused.json().code, 'UNSUPPORTED_MEDIA_TYPE');

    const done = await asCustomer(token, { method: 'POST', payload: { action: 'finish' } });
    assert.equal(done.statusCode, 200);
    assert.equal(done.json().data.interview.state, 'finished');
    const late = await asCustomer(token, { method: 'POST', payload: { questionId: 'q1', text: 'One more thing' } });
    assert.equal(late.statusCode, 409);
    assert.equal(late.json().code, 'CONFLICT');
    assert.equal(made.id, done.json().data.interview.id);
  });

  it('secrets: the wrong kind is 401, an upload token of another session is 404, an expired link is 410', async () => {
    const first = await interview();
    const second = await interview();
    const d = await startDraft(t);
    const wrongKind = await customerCall(asDraft(d, { method: 'GET', url: '/api/proof/interview' }));
    assert.equal(wrongKind.statusCode, 401);
    assert.deepEqual(Object.keys(wrongKind.json()).sort(), ['code', 'error']);
    const video = mp4Bytes(10_000);
    const a = (await asCustomer(first.interviewToken, { method: 'POST',
      payload: { action: 'start_upload', questionId: 'q1', size: video.length, sha256: sha256(video) } })).json().data;
    const b = (await asCustomer(second.interviewToken, { method: 'POST',
      payload: { action: 'start_upload', questionId: 'q1', size: video.length, sha256: sha256(video) } })).json().data;
    assert.equal((await putAnswer(a.upload, b.uploadToken, video)).statusCode, 404, 'bound to its own session');
    const onDraftRoute = await customerCall({
      method: 'GET', url: `/api/proof/collect/drafts/${d.id}/uploads/${a.upload.id}`, headers: { 'x-upload-token': a.uploadToken },
    });
    assert.equal(onDraftRoute.statusCode, 404, 'an interview upload token opens no draft upload');

    await ctx.dataSource.query(`UPDATE collection_secrets SET expires_at = now() - interval '1 second' WHERE interview_id = $1 AND kind = 'interview'`,
      [first.interview.id]);
    const expired = await asCustomer(first.interviewToken, { method: 'GET' });
    assert.equal(expired.statusCode, 410);
    assert.equal(expired.json().code, 'EXPIRED');
    await ctx.dataSource.query(`UPDATE collection_interviews SET expires_at = now() - interval '1 second' WHERE id = $1`, [first.interview.id]);
    assert.equal((await putAnswer(a.upload, a.uploadToken, video)).statusCode, 410);
  });
});

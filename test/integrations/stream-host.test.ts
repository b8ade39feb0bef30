import assert from 'node:assert/strict';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { FastifyInstance } from 'fastify';
import { mintStreamSourceToken } from '../../db/integrations/stream-copies';
import { mediaStoreOf } from '../../runtime/media-store';
import { runWorkflowCommand } from '../../worker/workflow-commands';
import { streamCopyWorkflow } from '../../workflows/integrations/stream-copy-workflow';
import { call, eventually, withKey } from '../support/fixtures';
import { IntegrationTenant, createIntegrationTenant, ledgerOfProduct } from '../support/integrations';
import { approve, requestApproval, submissionBody, submit } from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import { streamCopyWorkflowId } from '../../workflows/workflow-ids';

const SECRET = 'stream-webhook-secret';
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface ApprovedVideo { mediaId: string; itemId: string; versionId: string; bytes: Buffer }

describe('integrations: video host copies (stream-copy workflow, source link, readiness webhook)', () => {
  let tenant: IntegrationTenant;
  let app: FastifyInstance;

  before(async () => {
    tenant = await createIntegrationTenant();
    app = await ctx.buildApp({ proofStreamWebhookSecret: SECRET });
  });

  /** A customer video (stored like an upload) on an approved item whose grant allows video. */
  async function approvedVideo(t: IntegrationTenant = tenant, media = ['text', 'video']): Promise<ApprovedVideo> {
    const bytes = randomBytes(40_000);
    const mediaId = `med_${randomBytes(10).toString('hex')}`;
    const key = `media/${t.organizationId}/${mediaId}`;
    await mediaStoreOf(ctx.config).put(key, bytes);
    await ctx.dataSource.query(
      `INSERT INTO collection_media (id, organization_id, product_id, upload_id, kind, content_type, size, sha256, storage_key)
       VALUES ($1, $2, $3, $4, 'video', 'video/mp4', $5, $6, $7)`, [mediaId, t.organizationId, t.product.id, `ups_${mediaId}`, bytes.length, sha256(bytes),
        key]);
    const base = submissionBody();
    const s = await submit(t, {
      ...base, type: 'video', content: { ...base.content, mediaAssetIds: [mediaId] }, consent: { ...base.consent, media },
    });
    assert.equal((await requestApproval(t, s.proofItemId, s.originalVersionId)).statusCode, 200);
    assert.equal((await approve(t, s.proofItemId, s.originalVersionId)).statusCode, 200);
    return { mediaId, itemId: s.proofItemId, versionId: s.originalVersionId, bytes };
  }

  const source = (url: string, headers: Record<string, string> = {}) => call({ method: 'GET', url: new URL(url).pathname, headers });
  const notify = (body: object, secret = SECRET) => {
    const payload = JSON.stringify(body);
    const time = Math.floor(Date.now() / 1000);
    const sig = createHmac('sha256', secret).update(`${time}.${payload}`).digest('hex');
    return call({ method: 'POST', url: '/api/public/proof/stream/webhook', payload,
      headers: { 'content-type': 'application/json', 'webhook-signature': `time=${time},sig1=${sig}` } }, app);
  };
  const copyRow = async (mediaId: string) => (await ctx.dataSource.query(`SELECT * FROM proof_stream_copies WHERE media_id = $1`, [mediaId]))[0];

  it('on approval asks the host to copy the video from a signed source link, serves it with ranges, and turns playable when ready', async () => {
    const v = await approvedVideo();
    const copy = await eventually(async () => ctx.streamHost.copyOf(v.mediaId));
    assert.equal(copy.authorization, 'Bearer stream-api-token');
    assert.match(copy.body.url, /^https:\/\/proof\.example\.test\/api\/public\/proof\/stream\/source\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const result = await ctx.temporal.workflow.getHandle(streamCopyWorkflowId(v.mediaId)).result();
    assert.equal(result, copy.uid);
    const claims = JSON.parse(Buffer.from(new URL(copy.body.url).pathname.split('/').pop()!.split('.')[0], 'base64url').toString('utf8'));
    assert.deepEqual({ m: claims.m, v: claims.v, p: claims.p }, { m: v.mediaId, v: v.versionId, p: tenant.product.id });
    assert.ok(claims.exp - Date.now() / 1000 <= ctx.config.proofStreamLinkTtlSeconds && claims.exp - Date.now() / 1000 > 0);

    const whole = await source(copy.body.url);
    assert.equal(whole.statusCode, 200, whole.body);
    assert.equal(whole.headers['content-type'], 'video/mp4');
    assert.equal(sha256(whole.rawPayload), sha256(v.bytes));
    const part = await source(copy.body.url, { range: 'bytes=100-199' });
    assert.equal(part.statusCode, 206);
    assert.equal(part.headers['content-range'], `bytes 100-199/${v.bytes.length}`);
    assert.deepEqual(part.rawPayload, v.bytes.subarray(100, 200));
    assert.equal((await source(copy.body.url, { range: `bytes=${v.bytes.length}-` })).statusCode, 416);

    assert.deepEqual({ uid: (await copyRow(v.mediaId)).uid, state: (await copyRow(v.mediaId)).state }, { uid: copy.uid, state: 'copying' });
    const ready = await notify({ uid: copy.uid, readyToStream: true, status: { state: 'ready' }, meta: { mediaAssetId: v.mediaId } });
    assert.equal(ready.statusCode, 200, ready.body);
    assert.equal((await copyRow(v.mediaId)).state, 'playable');
    const unknown = await notify({ uid: 'not-ours', readyToStream: true, status: { state: 'ready' } });
    assert.equal(unknown.statusCode, 200, 'an unknown uid is ignored');

    // Started again, the workflow finds the accepted copy and asks the host nothing.
    const again = await ctx.temporal.workflow.execute(streamCopyWorkflow, {
      workflowId: `${streamCopyWorkflowId(v.mediaId)}-again`, taskQueue: ctx.config.taskQueue,
      args: [{ organizationId: tenant.organizationId, productId: tenant.product.id, mediaAssetId: v.mediaId, versionId: v.versionId }],
    });
    assert.equal(again, copy.uid);
    assert.equal(ctx.streamHost.copies.filter((c) => c.body.meta.mediaAssetId === v.mediaId).length, 1);
  });

  it('answers 404 for a forged, expired or foreign link, and once a revocation is filed', async () => {
    const v = await approvedVideo();
    const copy = await eventually(async () => ctx.streamHost.copyOf(v.mediaId));
    const token = new URL(copy.body.url).pathname.split('/').pop()!;
    const [body, mac] = token.split('.');
    const flipped = `${body}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    const now = Math.floor(Date.now() / 1000);
    const expired = await mintStreamSourceToken(ctx.dataSource, { m: v.mediaId, v: v.versionId, p: tenant.product.id, exp: now - 1 });
    const other = await createIntegrationTenant();
    const foreign = await mintStreamSourceToken(ctx.dataSource, { m: v.mediaId, v: v.versionId, p: other.product.id, exp: now + 60 });
    const unapproved = await mintStreamSourceToken(ctx.dataSource, { m: v.mediaId, v: 'pver_unknown0000000', p: tenant.product.id, exp: now + 60 });
    for (const bad of [flipped, expired, foreign, unapproved, 'not-a-token', `${body}.`]) {
      const res = await call({ method: 'GET', url: `/api/public/proof/stream/source/${bad}` });
      assert.equal(res.statusCode, 404, bad);
    }
    assert.equal((await source(copy.body.url)).statusCode, 200);
    const revoked = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${v.itemId}/revoke`,
      payload: { requestText: 'Please take my video down' } }));
    assert.ok([200, 202].includes(revoked.statusCode), revoked.body);
    assert.equal((await source(copy.body.url)).statusCode, 404, 'a filed revocation stops the source at once');
  });

  it('neither copies nor serves a video the grant does not allow', async () => {
    const v = await approvedVideo(tenant, ['text']);
    const handle = ctx.temporal.workflow.getHandle(streamCopyWorkflowId(v.mediaId));
    await eventually(() => handle.describe().catch(() => null));
    assert.equal(await handle.result(), null);
    assert.equal(ctx.streamHost.copyOf(v.mediaId), undefined);
    const token = await mintStreamSourceToken(ctx.dataSource, { m: v.mediaId, v: v.versionId, p: tenant.product.id, exp: Math.floor(Date.now() / 1000) + 60 });
    assert.equal((await call({ method: 'GET', url: `/api/public/proof/stream/source/${token}` })).statusCode, 404);
  });

  it('records a host error as a stream_failed health warning, once a day', async () => {
    const v = await approvedVideo();
    const copy = await eventually(async () => ctx.streamHost.copyOf(v.mediaId));
    await eventually(async () => (await copyRow(v.mediaId))?.uid);
    const failed = { uid: copy.uid, readyToStream: false, status: { state: 'error', errorReasonCode: 'ERR_NON_VIDEO' }, meta: { mediaAssetId: v.mediaId } };
    assert.equal((await notify(failed)).statusCode, 200);
    assert.equal((await notify(failed)).statusCode, 200);
    const row = await copyRow(v.mediaId);
    assert.deepEqual({ state: row.state, reason: row.error_reason }, { state: 'failed', reason: 'ERR_NON_VIDEO' });
    const warnings = (await ledgerOfProduct(tenant.product.id, 'proof.health.warning')).filter((w) => w.properties.mediaAssetId === v.mediaId);
    assert.equal(warnings.length, 1);
    assert.deepEqual(warnings[0].properties, { check: 'stream_failed', mediaAssetId: v.mediaId });
    const open = await call({ method: 'GET', url: '/api/workspace/proof/health', headers: { cookie: tenant.owner.cookie } });
    assert.ok(open.json().data.some((f: { check: string; properties: { mediaAssetId?: string } }) =>
      f.check === 'stream_failed' && f.properties.mediaAssetId === v.mediaId));
  });

  it('copies nothing when no video host is configured', async () => {
    const mediaAssetId = `med_${randomBytes(10).toString('hex')}`;
    await runWorkflowCommand(ctx.temporal, { ...ctx.config, proofStreamApiUrl: undefined }, {
      type: 'proof.stream.copy', tenant: { organizationId: tenant.organizationId, productId: tenant.product.id }, mediaAssetId, versionId: 'pver_x',
    });
    await assert.rejects(ctx.temporal.workflow.getHandle(streamCopyWorkflowId(mediaAssetId)).describe(), WorkflowNotFoundError);
  });
});

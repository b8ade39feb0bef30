import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import canonicalize from 'canonicalize';
import { FastifyInstance } from 'fastify';
import { asTeammate, call, errorCode, sessionFor, settledHandle, withKey } from '../support/fixtures';
import {
  ProofTenant, approve, approvedItem, createProofTenant, getItem, ledgerTypes, rawQuery, requestApproval, submissionBody, submit,
} from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import { deletionWorkflowId } from '../../workflows/workflow-ids';
import { route } from '../support/routes';
import { EXPORT_PAGE_SIZE, approvedExportDocument } from '../../db/proof/proof-exports';

/** An off-the-shelf RFC 8785 canonicaliser, as a recipient would use it. */
const canonical = (value: unknown): string => canonicalize(value)!;

describe('proof ledger', () => {
  let tenant: ProofTenant;

  before(async () => {
    tenant = await createProofTenant();
  });

  it('lists oldest first, filters by item, type and event id, and pages with the cursor', async () => {
    const a = await approvedItem(tenant);
    await submit(tenant);
    const list = (q: string) => call(withKey(tenant.readKey, { method: 'GET', url: route('/api/v1/proof/events', {}, q) }));
    const own = (await list(`?proofItemId=${a.proofItemId}`)).json().data;
    assert.deepEqual(own.map((e: { eventType: string }) => e.eventType),
      ['proof.response.submitted', 'proof.consent.granted', 'proof.item.review_requested', 'proof.item.approved']);
    const e = own[3];
    assert.deepEqual(Object.keys(e).sort(), ['actor', 'assetId', 'eventType', 'id', 'placementId', 'productId', 'proofItemId', 'properties', 'timestamp']);
    assert.equal(e.actor.type, 'teammate');
    const byType = (await list('?eventType=proof.item.approved')).json().data;
    assert.deepEqual(byType.map((x: { id: string }) => x.id), [e.id]);
    assert.deepEqual((await list(`?eventId=${e.id}`)).json().data.map((x: { id: string }) => x.id), [e.id]);
    assert.deepEqual((await list(`?eventId=evt_${e.id}`)).json().data.map((x: { id: string }) => x.id), [e.id]);
    const first = (await list('?limit=3')).json();
    const second = (await list(`?limit=3&cursor=${first.nextCursor}`)).json();
    const all = (await list('')).json().data.map((x: { id: string }) => x.id);
    assert.deepEqual([...first.data, ...second.data].map((x: { id: string }) => x.id), all);
  });

  it('the database refuses UPDATE, DELETE and TRUNCATE on the ledger', async () => {
    const s = await submit(tenant);
    const [row] = await ctx.dataSource.query('SELECT id FROM proof_events WHERE proof_item_id = $1 LIMIT 1', [s.proofItemId]);
    await assert.rejects(rawQuery(`UPDATE proof_events SET event_type = 'x' WHERE id = $1`, [row.id]), /append-only/);
    await assert.rejects(rawQuery('DELETE FROM proof_events WHERE id = $1', [row.id]), /append-only/);
    await assert.rejects(rawQuery('TRUNCATE proof_events CASCADE'), /append-only/);
    const still = await ctx.dataSource.query('SELECT event_type FROM proof_events WHERE id = $1', [row.id]);
    assert.equal(still.length, 1);
  });
});

describe('proof export', () => {
  let tenant: ProofTenant;

  before(async () => {
    tenant = await createProofTenant();
  });

  it('answers an approved-only bundle whose digest a recipient recomputes from the canonical bytes', async () => {
    const approved = await approvedItem(tenant);
    const draft = await submit(tenant);
    const res = await call(withKey(tenant.key, { method: 'POST', url: '/api/v1/proof/exports' }));
    assert.equal(res.statusCode, 201, res.body);
    const { bundle, digest } = res.json().data;
    assert.deepEqual(bundle.items.map((i: { id: string }) => i.id), [approved.proofItemId]);
    assert.ok(!res.body.includes(draft.proofItemId));
    assert.deepEqual(bundle.versions.map((v: { id: string }) => v.id), [approved.originalVersionId]);
    assert.equal(bundle.consents[0].grants[0].id, approved.consentGrantId);
    assert.deepEqual(bundle.placements, []);
    assert.equal(digest.algorithm, 'sha256');
    assert.equal(digest.canonicalization, 'RFC8785');
    assert.equal(createHash('sha256').update(canonical(bundle), 'utf8').digest('hex'), digest.value);
    assert.ok(!res.body.includes('ada@example.com') && !res.body.includes('evidence'));
  });

  it('exports only what consent allows now, and only the public version of each item', async () => {
    const t = await createProofTenant();
    const expired = await approvedItem(t);
    await ctx.dataSource.query(`UPDATE consent_grants SET valid_until = now() - interval '1 day' WHERE proof_item_id = $1`, [expired.proofItemId]);
    const open = await approvedItem(t, submissionBody({ consent: { ...submissionBody().consent, customerApprovedWording: false } }));
    const bound = await approvedItem(t);
    const derive = async (itemId: string) => {
      const res = await call(withKey(t.key, {
        method: 'POST', url: `/api/v1/proof/items/${itemId}/versions`,
        payload: { content: { text: 'We cut onboarding to 2 days.' }, changeReason: 'shorter for the wall' },
      }));
      assert.equal(res.statusCode, 201, res.body);
      const versionId = res.json().data.id as string;
      await requestApproval(t, itemId, versionId);
      await approve(t, itemId, versionId);
      return versionId;
    };
    const openV2 = await derive(open.proofItemId);
    await derive(bound.proofItemId);
    const { bundle } = (await call(withKey(t.key, { method: 'POST', url: '/api/v1/proof/exports' }))).json().data;
    assert.deepEqual(bundle.items.map((i: { id: string }) => i.id), [open.proofItemId],
      'an expired grant, and wording the customer did not approve, are not exported');
    assert.deepEqual(bundle.versions.map((v: { id: string }) => v.id), [openV2], 'only the public version, not the superseded original');
  });

  it('streams the bundle in canonical form, in keyset pages that add up to the whole, with the digest last', async () => {
    const t = await createProofTenant();
    const approved = [];
    for (let i = 0; i < 5; i++) approved.push(await approvedItem(t));
    // An ineligible item between eligible ones, so a page can hold fewer items than it read.
    await ctx.dataSource.query(`UPDATE consent_grants SET valid_until = now() - interval '1 day' WHERE proof_item_id = $1`, [approved[2].proofItemId]);
    const eligible = approved.filter((_, i) => i !== 2).map((a) => a.proofItemId);
    const read = async (pageSize: number) => {
      let text = '';
      for await (const chunk of approvedExportDocument(ctx.dataSource, t.product.id, pageSize)) text += chunk;
      return text;
    };
    const [paged, whole] = [await read(2), await read(EXPORT_PAGE_SIZE)];
    for (const text of [paged, whole]) {
      assert.equal(canonical(JSON.parse(text)), text, 'the whole document is written in RFC 8785 canonical form');
      const { bundle, digest } = JSON.parse(text);
      assert.deepEqual(bundle.items.map((i: { id: string }) => i.id), eligible);
      assert.deepEqual(bundle.consents.map((c: { proofItemId: string }) => c.proofItemId), eligible, 'consents[i] is of items[i]');
      assert.deepEqual(bundle.versions.map((v: { proofItemId: string }) => v.proofItemId), eligible, 'versions[i] is of items[i]');
      assert.equal(createHash('sha256').update(canonical(bundle), 'utf8').digest('hex'), digest.value);
      // The digest hashes the bundle's bytes exactly as they stand in the document.
      const bytes = text.slice('{"bundle":'.length, text.lastIndexOf(',"digest":'));
      assert.equal(createHash('sha256').update(bytes, 'utf8').digest('hex'), digest.value);
    }
    const withoutTime = (text: string) => ({ ...JSON.parse(text).bundle, generatedAt: null });
    assert.deepEqual(withoutTime(paged), withoutTime(whole), 'pages of 2 give the bundle one page gives');

    const res = await call(withKey(t.key, { method: 'POST', url: '/api/v1/proof/exports' }));
    assert.equal(res.statusCode, 201);
    assert.equal(res.headers['transfer-encoding'], 'chunked', 'streamed, not buffered to a length');
    assert.deepEqual(res.json().data.bundle.items.map((i: { id: string }) => i.id), eligible);
    assert.ok(!res.body.includes(tenant.product.id), "another product's items and placements never appear");
  });

  it('holds an Idempotency-Key while the export streams and stores no copy of it; a repeat exports afresh', async () => {
    const t = await createProofTenant();
    // Stories long enough that the body outgrows the buffers on its way, so the stream waits for its reader.
    const long = (n: number) => submissionBody({ content: { ...submissionBody().content, text: `Story ${n}: ${'we shipped faster. '.repeat(1000)}` } });
    for (let n = 0; n < 3; n++) await approvedItem(t, long(n));
    const key = `export-${randomBytes(6).toString('hex')}`;
    const exportWith = (options: object = {}) => ctx.app.inject({
      ...withKey(t.key, { method: 'POST', url: '/api/v1/proof/exports', headers: { 'idempotency-key': key } }), ...options,
    });
    const record = () => ctx.dataSource.query('SELECT state, response_body FROM idempotency_records WHERE idempotency_key = $1', [key]);
    const streaming = await exportWith({ payloadAsStream: true });
    assert.equal(streaming.statusCode, 201);
    assert.deepEqual(await record(), [{ state: 'in_progress', response_body: null }], 'held, unanswered, while the body streams');
    const meanwhile = await exportWith();
    assert.equal(meanwhile.statusCode, 409);
    assert.equal(errorCode(meanwhile), 'IDEMPOTENCY_IN_PROGRESS');
    let text = '';
    for await (const chunk of streaming.stream()) text += chunk;
    assert.equal(JSON.parse(text).data.bundle.items.length, 3);
    // Freed just after the last byte: the release is the response's close handler.
    for (let waited = 0; (await record()).length > 0 && waited < 5_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(await record(), [], 'freed once the answer has gone; no bundle is kept');
    const again = await exportWith();
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], undefined, 'not a replay: the state now, with its own digest');
    assert.equal(again.json().data.bundle.items.length, 3);
  });

  it('needs proof:export; raw originals only for a workspace owner', async () => {
    const s = await submit(tenant);
    const denied = await call(withKey(tenant.readKey, { method: 'POST', url: '/api/v1/proof/exports' }));
    assert.equal(denied.statusCode, 403);
    const byKey = await call(withKey(tenant.key, { method: 'POST', url: '/api/workspace/proof/exports/raw', payload: { productId: tenant.product.id } }));
    assert.equal(byKey.statusCode, 403);
    const admin = await sessionFor(tenant.organizationId, 'admin');
    const byAdmin = await call(asTeammate(admin, { method: 'POST', url: '/api/workspace/proof/exports/raw', payload: { productId: tenant.product.id } }));
    assert.equal(byAdmin.statusCode, 403);
    const raw = await call(asTeammate(tenant.owner, { method: 'POST', url: '/api/workspace/proof/exports/raw', payload: { productId: tenant.product.id } }));
    assert.equal(raw.statusCode, 201, raw.body);
    const { bundle, digest } = raw.json().data;
    assert.ok(bundle.originals.some((v: { id: string; isOriginal: boolean }) => v.id === s.originalVersionId && v.isOriginal));
    assert.equal(createHash('sha256').update(canonical(bundle), 'utf8').digest('hex'), digest.value);
    const other = await createProofTenant();
    const cross = await call(asTeammate(other.owner, { method: 'POST', url: '/api/workspace/proof/exports/raw', payload: { productId: tenant.product.id } }));
    assert.equal(cross.statusCode, 404);
  });
});

describe('proof deletion and recovery (real Temporal)', () => {
  let tenant: ProofTenant;
  let app: FastifyInstance;
  const del = (id: string, on = app) => call(asTeammate(tenant.owner, { method: 'DELETE', url: route('/api/workspace/proof/items/{id}', { id }) }), on);
  const restore = (id: string, on = app) => call(asTeammate(tenant.owner, { method: 'POST', url: route('/api/workspace/proof/items/{id}/restore', { id }) }),
    on);

  before(async () => {
    tenant = await createProofTenant();
    // Long enough for the restore test's calls on a loaded machine, short enough to wait out for the purge.
    app = await ctx.buildApp({ proofDeletionRecoveryMs: 4_000 });
  });

  it('a deleted item leaves lists and renders; a restore inside the window brings it back', async () => {
    // A window no loaded machine outruns, so the restore is inside it however slow the steps between.
    const roomy = await ctx.buildApp({ proofDeletionRecoveryMs: 120_000 });
    const s = await approvedItem(tenant);
    const res = await del(s.proofItemId, roomy);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.item.status, 'deleted');
    assert.ok(res.json().data.recoveryClosesAt);
    const read = (await getItem(tenant.key, s.proofItemId)).json().data;
    assert.deepEqual(read.eligibleChannels, []);
    const listed = (await call(withKey(tenant.key, { method: 'GET', url: '/api/v1/proof/items' }))).json().data;
    assert.ok(!listed.some((i: { id: string }) => i.id === s.proofItemId));
    const change = await requestApproval(tenant, s.proofItemId, s.originalVersionId);
    assert.equal(change.statusCode, 409);
    const restored = await restore(s.proofItemId, roomy);
    assert.equal(restored.statusCode, 200);
    assert.equal(restored.json().data.item.status, 'approved');
    const handle = (await settledHandle(deletionWorkflowId(s.proofItemId)));
    assert.equal(await handle.result(), 'restored');
    assert.deepEqual((await getItem(tenant.key, s.proofItemId)).json().data.eligibleChannels, ['website', 'in_app', 'email']);
  });

  it('after the window every use answers 410 RECOVERY_WINDOW_CLOSED and the workflow purges', async () => {
    const s = await submit(tenant);
    assert.equal((await del(s.proofItemId)).statusCode, 200);
    const handle = (await settledHandle(deletionWorkflowId(s.proofItemId)));
    assert.equal(await handle.result(), 'purged');
    assert.ok((await ledgerTypes(s.proofItemId)).includes('proof.item.purged'));
    const purged = await ctx.dataSource.query('SELECT customer_email FROM proof_items WHERE id = $1', [s.proofItemId]);
    assert.equal(purged[0].customer_email, null);
    const erased = await ctx.dataSource.query('SELECT content, content_hash FROM proof_versions WHERE id = $1', [s.originalVersionId]);
    assert.deepEqual(erased[0].content, {});
    assert.match(erased[0].content_hash, /^sha256:/, 'the hash stays as a record of what existed');
    const evidence = await ctx.dataSource.query('SELECT evidence FROM consent_grants WHERE id = $1', [s.consentGrantId]);
    assert.equal(evidence[0].evidence, null);
    for (const res of [
      await getItem(tenant.key, s.proofItemId),
      await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/proof/items/${s.proofItemId}/versions` })),
      await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/revoke` })),
      await restore(s.proofItemId),
      await del(s.proofItemId),
    ]) {
      assert.equal(res.statusCode, 410, res.body);
      assert.equal(errorCode(res), 'RECOVERY_WINDOW_CLOSED');
    }
  });

  it('a key may not delete', async () => {
    const s = await submit(tenant);
    const res = await call(withKey(tenant.key, { method: 'DELETE', url: `/api/workspace/proof/items/${s.proofItemId}` }), app);
    assert.equal(res.statusCode, 403);
    assert.equal(errorCode(res), 'FORBIDDEN');
  });
});

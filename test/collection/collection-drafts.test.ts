import assert from 'node:assert/strict';
import { asTeammate, call } from '../support/fixtures';
import { approve, eventually, ledgerTypes, publishedPlacement, requestApproval } from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import {
  CollectionTenant, asDraft, createCollectionTenant, customerCall, fillDraft, startDraft, submitDraft,
} from '../support/collection';
import { route } from '../support/routes';

describe('collection: drafts, submit and the control link', () => {
  let t: CollectionTenant;
  before(async () => {
    t = await createCollectionTenant();
  });

  it('starts a draft pinned to the live version, with the consent wording and hash', async () => {
    const d = await startDraft(t);
    assert.match(d.session, /^ds_[A-Za-z0-9_-]{43}$/);
    assert.equal(d.body.draft.flowVersionId, t.flowVersionId);
    assert.equal(d.body.draft.status, 'open');
    assert.equal(d.body.flow.wordingHash, t.wordingHash);
    assert.equal(d.body.flow.consentTemplateVersionId, t.templateVersionId);
    const rows = await ctx.dataSource.query(`SELECT digest FROM collection_secrets WHERE draft_id = $1`, [d.id]);
    assert.equal(rows.length, 1);
    assert.notEqual(rows[0].digest, d.session, 'only the hash is stored');
  });

  it('answers the simple {error, code} body for refusals, unknown routes and malformed bodies', async () => {
    const unknown = await customerCall({ method: 'GET', url: '/api/proof/nothing-here' });
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(Object.keys(unknown.json()).sort(), ['code', 'error']);
    assert.equal(unknown.json().code, 'NOT_FOUND');
    const malformed = await customerCall({ method: 'POST', url: '/api/proof/collect/drafts', payload: '{"flowId": ',
      headers: { 'content-type': 'application/json' } });
    assert.equal(malformed.statusCode, 400);
    assert.equal(malformed.json().code, 'INVALID_INPUT');
    const extra = await customerCall({ method: 'POST', url: '/api/proof/collect/drafts', payload: { flowId: t.publicId, admin: true } });
    assert.equal(extra.json().code, 'INVALID_INPUT');
    const big = await customerCall({ method: 'POST', url: '/api/proof/collect/drafts', payload: { flowId: 'x'.repeat(300 * 1024) } });
    assert.equal(big.statusCode, 413);
    assert.equal(big.json().code, 'TOO_LARGE');
    const form = await customerCall({ method: 'POST', url: '/api/proof/collect/drafts', payload: 'a=b', headers: { 'content-type': 'text/plain' } });
    assert.equal(form.statusCode, 415);
    assert.equal(form.json().code, 'UNSUPPORTED_MEDIA_TYPE');
    const v1 = await call({ method: 'GET', url: '/api/v1/nothing-here' });
    assert.equal(v1.json().error.code, 'NOT_FOUND', '/api/v1 keeps its envelope');
  });

  it('refuses a secret in a query string, a missing or unknown session, and another draft\'s session', async () => {
    const d = await startDraft(t);
    const other = await startDraft(t);
    const inQuery = await customerCall({ method: 'GET', url: `/api/proof/collect/drafts/${d.id}?session=${d.session}` });
    assert.equal(inQuery.statusCode, 400);
    assert.equal(inQuery.json().code, 'INVALID_INPUT');
    const missing = await customerCall({ method: 'GET', url: `/api/proof/collect/drafts/${d.id}` });
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.json().code, 'UNAUTHORIZED');
    const unknown = await customerCall({ method: 'GET', url: `/api/proof/collect/drafts/${d.id}`, headers: { 'x-draft-session': `ds_${'A'.repeat(43)}` } });
    assert.equal(unknown.statusCode, 401);
    const crossed = await customerCall(asDraft(other, { method: 'GET', url: `/api/proof/collect/drafts/${d.id}` }));
    assert.equal(crossed.statusCode, 404);
    assert.equal(crossed.json().code, 'NOT_FOUND');
    const ok = await customerCall(asDraft(d, { method: 'GET', url: `/api/proof/collect/drafts/${d.id}` }));
    assert.equal(ok.statusCode, 200);
    assert.ok(ok.headers['x-ratelimit-limit']);
  });

  it('auto-saves with revision checks and checks answers against the pinned version', async () => {
    const d = await startDraft(t);
    const saved = await customerCall(asDraft(d, { method: 'PATCH', url: `/api/proof/collect/drafts/${d.id}`, payload: { text: 'draft one', revision: 1 } }));
    assert.equal(saved.statusCode, 200, saved.body);
    assert.equal(saved.json().data.draft.revision, 2);
    const stale = await customerCall(asDraft(d, { method: 'PATCH', url: `/api/proof/collect/drafts/${d.id}`, payload: { text: 'draft two', revision: 1 } }));
    assert.equal(stale.statusCode, 409);
    assert.equal(stale.json().code, 'CONFLICT');
    const unknownQuestion = await customerCall(asDraft(d, { method: 'PATCH', url: `/api/proof/collect/drafts/${d.id}`,
      payload: { answers: { qst_nope: 'x' } } }));
    assert.equal(unknownQuestion.statusCode, 400);
    const beyondTerms = await customerCall(asDraft(d, { method: 'PATCH', url: `/api/proof/collect/drafts/${d.id}`,
      payload: { publication: { channels: ['paid_ads'] } } }));
    assert.equal(beyondTerms.statusCode, 400);
    const removed = await customerCall(asDraft(d, {
      method: 'PATCH', url: `/api/proof/collect/drafts/${d.id}`, payload: { answers: { [t.questionId]: 'first' } },
    }));
    assert.equal(removed.json().data.draft.answers[t.questionId], 'first');
    const cleared = await customerCall(asDraft(d, { method: 'PATCH', url: `/api/proof/collect/drafts/${d.id}`,
      payload: { answers: { [t.questionId]: null } } }));
    assert.deepEqual(cleared.json().data.draft.answers, {});
  });

  it('continuation links are single use and 7 days; an expired one is 410', async () => {
    const d = await startDraft(t);
    const issued = await customerCall(asDraft(d, { method: 'POST', url: `/api/proof/collect/drafts/${d.id}/continuation` }));
    assert.equal(issued.statusCode, 201, issued.body);
    const { continuationToken, continuationUrl } = issued.json().data;
    assert.match(continuationToken, /^cl_/);
    assert.ok(continuationUrl.endsWith(`/continue#${continuationToken}`));
    const first = await customerCall({ method: 'POST', url: '/api/proof/collect/continue', headers: { 'x-link-token': continuationToken } });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().data.draft.id, d.id);
    assert.notEqual(first.json().data.draftSession, d.session);
    const again = await customerCall({ method: 'POST', url: '/api/proof/collect/continue', headers: { 'x-link-token': continuationToken } });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().code, 'ALREADY_USED');
    const old = await customerCall(asDraft(d, { method: 'POST', url: `/api/proof/collect/drafts/${d.id}/continuation` }));
    await ctx.dataSource.query(`UPDATE collection_secrets SET expires_at = now() - interval '1 second' WHERE kind = 'continuation' AND draft_id = $1 AND used_at IS NULL`, [d.id]);
    const late = await customerCall({ method: 'POST', url: '/api/proof/collect/continue', headers: { 'x-link-token': old.json().data.continuationToken } });
    assert.equal(late.statusCode, 410);
    assert.equal(late.json().code, 'EXPIRED');
  });

  it('an expired draft answers 410', async () => {
    const d = await startDraft(t);
    await ctx.dataSource.query(`UPDATE collection_drafts SET expires_at = now() - interval '1 second' WHERE id = $1`, [d.id]);
    const res = await customerCall(asDraft(d, { method: 'PATCH', url: `/api/proof/collect/drafts/${d.id}`, payload: { text: 'late' } }));
    assert.equal(res.statusCode, 410);
    assert.equal(res.json().code, 'EXPIRED');
  });

  it('refuses an incomplete submit with 400 and a second submit with 409', async () => {
    const d = await startDraft(t);
    const incomplete = await submitDraft(d);
    assert.equal(incomplete.statusCode, 400);
    assert.equal(incomplete.json().code, 'INVALID_INPUT');
    await fillDraft(t, d);
    const done = await submitDraft(d);
    assert.equal(done.statusCode, 201, done.body);
    const again = await submitDraft(d);
    assert.equal(again.statusCode, 409);
    const read = await customerCall(asDraft(d, { method: 'GET', url: `/api/proof/collect/drafts/${d.id}` }));
    assert.equal(read.json().data.draft.status, 'submitted', 'after submit the session still reads');
  });

  it('submit writes the item, grant with wording hash, receipt, routing and ledger; then a customer controls the story', async () => {
    const d = await startDraft(t);
    await fillDraft(t, d);
    const res = await submitDraft(d);
    assert.equal(res.statusCode, 201, res.body);
    const s = res.json().data;
    assert.match(s.controlToken, /^ct_/);
    assert.ok(s.controlUrl.endsWith(`/control#${s.controlToken}`));
    const [grant] = await ctx.dataSource.query(`SELECT * FROM consent_grants WHERE id = $1`, [s.consentGrantId]);
    assert.equal(grant.consent_template_version_id, t.templateVersionId);
    assert.equal(grant.wording_hash, t.wordingHash);
    assert.equal(grant.customer_approved_wording, true);
    const [routing] = await ctx.dataSource.query(`SELECT * FROM proof_routings WHERE proof_item_id = $1`, [s.proofItemId]);
    assert.equal(routing.band, 'positive');
    assert.deepEqual(await ledgerTypes(s.proofItemId), ['proof.response.submitted', 'proof.consent.granted', 'proof.response.routed']);
    const [item] = await ctx.dataSource.query(`SELECT verification_state, type FROM proof_items WHERE id = $1`, [s.proofItemId]);
    assert.equal(item.verification_state, 'unverified');
    assert.equal(item.type, 'text');

    const control = (opts: object) => customerCall({ ...opts, headers: { 'x-control-token': s.controlToken } } as never);
    const view = await control({ method: 'GET', url: '/api/proof/collect/control' });
    assert.equal(view.statusCode, 200, view.body);
    assert.equal(view.json().data.stories.length, 1);
    assert.equal(view.json().data.stories[0].proofItemId, s.proofItemId);

    // A teammate approves and places it: it renders.
    assert.equal((await requestApproval(t, s.proofItemId, s.originalVersionId)).statusCode, 200);
    assert.equal((await approve(t, s.proofItemId, s.originalVersionId)).statusCode, 200);
    const placementId = await publishedPlacement(t, [s.proofItemId]);
    const render = async () => (await call({ method: 'GET', url: route('/api/public/proof/render/{id}', { id: placementId }) })).json()
      .manifest.items.map((i: { proofItemId: string }) => i.proofItemId);
    assert.deepEqual(await render(), [s.proofItemId]);
    const passport = await control({ method: 'GET', url: `/api/proof/collect/control/passport?proofItemId=${s.proofItemId}` });
    assert.equal(passport.statusCode, 200, passport.body);
    assert.equal(passport.json().data.uses[0].rendersNow, true);

    // Pause stops renders at once; resume brings them back.
    const paused = await control({ method: 'POST', url: '/api/proof/collect/control', payload: { action: 'pause', proofItemId: s.proofItemId } });
    assert.equal(paused.statusCode, 200, paused.body);
    assert.deepEqual(await render(), []);
    const passportPaused = await control({ method: 'GET', url: `/api/proof/collect/control/passport?proofItemId=${s.proofItemId}` });
    assert.deepEqual(passportPaused.json().data.uses[0].reasons, ['paused_by_customer']);
    await control({ method: 'POST', url: '/api/proof/collect/control', payload: { action: 'resume', proofItemId: s.proofItemId } });
    assert.deepEqual(await render(), [s.proofItemId]);

    // The receipt, downloaded, verifies as granted; after withdraw it verifies as revoked.
    const receipt = await control({ method: 'GET', url: `/api/proof/collect/control/receipt?proofItemId=${s.proofItemId}` });
    assert.equal(receipt.statusCode, 200, receipt.body);
    assert.match(receipt.headers['content-disposition'] as string, /attachment/);
    const verify = async () => (await call({ method: 'POST', url: '/api/public/proof/receipts/verify', payload: receipt.json() })).json().data.status;
    assert.equal(await verify(), 'granted');

    const narrowNothing = await control({ method: 'POST', url: '/api/proof/collect/control/passport',
      payload: { action: 'limit_channels', proofItemId: s.proofItemId, channels: [] } });
    assert.equal(narrowNothing.statusCode, 400, narrowNothing.body);
    assert.deepEqual(Object.keys(narrowNothing.json()).sort(), ['code', 'error']);

    const withdrawn = await control({ method: 'POST', url: '/api/proof/collect/control',
      payload: { action: 'withdraw', proofItemId: s.proofItemId, confirm: true } });
    assert.equal(withdrawn.statusCode, 200, withdrawn.body);
    assert.equal(withdrawn.json().data.requestOnly, false);
    assert.equal(withdrawn.json().data.revocation.resolutionState, 'completed');
    assert.deepEqual(await render(), [], 'the very next render leaves it out');
    assert.equal(await verify(), 'revoked');
    const repeat = await control({ method: 'POST', url: '/api/proof/collect/control',
      payload: { action: 'withdraw', proofItemId: s.proofItemId, confirm: true } });
    assert.equal(repeat.json().data.revocation.id, withdrawn.json().data.revocation.id);
    const after = await control({ method: 'POST', url: '/api/proof/collect/control', payload: { action: 'pause', proofItemId: s.proofItemId } });
    assert.equal(after.statusCode, 409);
    assert.equal(after.json().code, 'REVOKED_FINAL');
    await eventually(async () => (await ledgerTypes(s.proofItemId)).includes('proof.consent.revoked'));
  });

  it('approve_wording needs the exact hash and grants that version; decline and corrections are recorded', async () => {
    const d = await startDraft(t);
    await fillDraft(t, d);
    const s = (await submitDraft(d)).json().data;
    const edited = await call({
      method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/versions`, headers: { authorization: `Bearer ${t.key}` },
      payload: { content: { text: 'Onboarding: nine days down to two.', title: 'Faster onboarding' }, changeReason: 'tightened wording' },
    });
    assert.equal(edited.statusCode, 201, edited.body);
    const version = edited.json().data;
    const control = (opts: object) => customerCall({ ...opts, headers: { 'x-control-token': s.controlToken } } as never);
    const pending = (await control({ method: 'GET', url: '/api/proof/collect/control' })).json().data.stories[0].pendingApprovals;
    assert.equal(pending.length, 1);
    assert.equal(pending[0].versionId, version.id);
    const wrongHash = await control({ method: 'POST', url: '/api/proof/collect/control',
      payload: { action: 'approve_wording', proofItemId: s.proofItemId, versionId: version.id, contentHash: 'sha256:nope' } });
    assert.equal(wrongHash.statusCode, 409);
    const approved = await control({ method: 'POST', url: '/api/proof/collect/control',
      payload: { action: 'approve_wording', proofItemId: s.proofItemId, versionId: version.id, contentHash: version.contentHash } });
    assert.equal(approved.statusCode, 201, approved.body);
    assert.equal(approved.json().data.approvedVersionId, version.id);
    const [grant] = await ctx.dataSource.query(`SELECT state, approved_version_id, wording_hash FROM consent_grants WHERE id = $1`,
      [approved.json().data.consentGrantId]);
    assert.deepEqual(grant, { state: 'active', approved_version_id: version.id, wording_hash: t.wordingHash });
    const correction = await control({ method: 'POST', url: '/api/proof/collect/control',
      payload: { action: 'request_correction', proofItemId: s.proofItemId, message: 'My title is CTO, not CEO.' } });
    assert.equal(correction.statusCode, 201, correction.body);
    const story = (await control({ method: 'GET', url: '/api/proof/collect/control' })).json().data.stories[0];
    assert.equal(story.pendingApprovals.length, 0);
    assert.equal(story.corrections[0].status, 'open');
  });

  it('isolates people and tenants: another person\'s control link sees nothing of this one\'s', async () => {
    const mine = await startDraft(t);
    await fillDraft(t, mine);
    const a = (await submitDraft(mine)).json().data;
    const theirs = await startDraft(t);
    await fillDraft(t, theirs);
    const b = (await submitDraft(theirs)).json().data;
    const asB = (opts: object) => customerCall({ ...opts, headers: { 'x-control-token': b.controlToken } } as never);
    const view = await asB({ method: 'GET', url: '/api/proof/collect/control' });
    assert.deepEqual(view.json().data.stories.map((s: { proofItemId: string }) => s.proofItemId), [b.proofItemId]);
    for (const opts of [
      { method: 'GET', url: `/api/proof/collect/control/passport?proofItemId=${a.proofItemId}` },
      { method: 'GET', url: `/api/proof/collect/control/receipt?proofItemId=${a.proofItemId}` },
      { method: 'POST', url: '/api/proof/collect/control', payload: { action: 'withdraw', proofItemId: a.proofItemId, confirm: true } },
    ]) {
      const res = await asB(opts);
      assert.equal(res.statusCode, 404, `${opts.url}: ${res.body}`);
    }
    const other = await createCollectionTenant();
    const foreign = await customerCall(asDraft(mine, { method: 'GET', url: `/api/proof/collect/drafts/${mine.id}` }));
    assert.equal(foreign.statusCode, 200);
    const otherTenantItem = await call(asTeammate(other.owner, { method: 'GET', url: `/api/proof/collect/control?proofItemId=${a.proofItemId}` }));
    assert.equal(otherTenantItem.statusCode, 401);
  });

  it('a flow that is not live refuses new drafts with 409; an unknown one is 404', async () => {
    const unknown = await customerCall({ method: 'POST', url: '/api/proof/collect/drafts', payload: { flowId: 'fp_unknown0000000000' } });
    assert.equal(unknown.statusCode, 404);
    await ctx.dataSource.query(`UPDATE collection_flows SET state = 'paused' WHERE id = $1`, [t.flowId]);
    try {
      const paused = await customerCall({ method: 'POST', url: '/api/proof/collect/drafts', payload: { flowId: t.publicId } });
      assert.equal(paused.statusCode, 409);
    } finally {
      await ctx.dataSource.query(`UPDATE collection_flows SET state = 'live' WHERE id = $1`, [t.flowId]);
    }
  });
});

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../../db/rules/secrets';
import { call, endUserToken, withKey } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { CollectionTenant, asDraft, createCollectionTenant, customerCall, fillDraft, submitDraft } from '../support/collection';

describe('collection: personal links, opt-out, end-user sessions, prompt, key sessions', () => {
  let t: CollectionTenant;
  before(async () => {
    t = await createCollectionTenant();
  });

  /** A sent personal request with its pr_ token (the request itself is the setup side's). */
  async function sentRequest(recipient: object, status = 'sent') {
    const token = `pr_${randomBytes(32).toString('base64url')}`;
    const id = `req_${randomBytes(10).toString('hex')}`;
    await ctx.dataSource.query(
      `INSERT INTO proof_requests (id, organization_id, product_id, flow_id, flow_version_id, channel, recipient, expires_in_days, status,
         link_token_hash, sent_at, expires_at, created_by)
       VALUES ($1, $2, $3, $4, $5, 'link', $6, 30, $7, $8, now(), now() + interval '30 days', '{"type":"teammate"}')`,
      [id, t.organizationId, t.product.id, t.flowId, t.flowVersionId, JSON.stringify(recipient), status, sha256Hex(token)]);
    return { id, token };
  }
  const withLink = (token: string) => ({ method: 'POST' as const, url: '/api/proof/collect/drafts', payload: {}, headers: { 'x-link-token': token } });

  it('a personal link opens the recipient\'s draft (verified), reopens the same one, and submit marks the request responded', async () => {
    const r = await sentRequest({ email: 'linus@example.com', name: 'Linus', personRef: 'cus_77' });
    const first = await customerCall(withLink(r.token));
    assert.equal(first.statusCode, 201, first.body);
    const again = await customerCall(withLink(r.token));
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().data.draft.id, first.json().data.draft.id);
    assert.notEqual(again.json().data.draftSession, first.json().data.draftSession);
    assert.equal(first.json().data.draft.identity.email, 'linus@example.com');
    const d = { id: first.json().data.draft.id, session: first.json().data.draftSession, body: {} };
    await fillDraft(t, d);
    const s = await submitDraft(d);
    assert.equal(s.statusCode, 201, s.body);
    const [item] = await ctx.dataSource.query(`SELECT verification_state, customer_person_id FROM proof_items WHERE id = $1`, [s.json().data.proofItemId]);
    assert.deepEqual(item, { verification_state: 'verified_customer', customer_person_id: 'cus_77' });
    const [request] = await ctx.dataSource.query(`SELECT status FROM proof_requests WHERE id = $1`, [r.id]);
    assert.equal(request.status, 'responded');
    const closed = await customerCall(withLink(r.token));
    assert.equal(closed.statusCode, 409);
  });

  it('opt-out suppresses every later ask, idempotently; an unknown link is 401; an expired one is 410', async () => {
    const r = await sentRequest({ email: 'Opt@Example.com' });
    const out = await customerCall({ method: 'POST', url: '/api/proof/collect/opt-out', payload: {}, headers: { 'x-link-token': r.token } });
    assert.equal(out.statusCode, 200, out.body);
    assert.deepEqual(out.json().data, { status: 'opted_out' });
    assert.equal((await customerCall({ method: 'POST', url: '/api/proof/collect/opt-out', headers: { 'x-link-token': r.token } })).statusCode, 200);
    const opened = await customerCall(withLink(r.token));
    assert.equal(opened.statusCode, 409);
    assert.equal(opened.json().code, 'OPTED_OUT');
    const later = await sentRequest({ email: 'opt@example.com' });
    assert.equal((await customerCall(withLink(later.token))).json().code, 'OPTED_OUT', 'a later ask to the same recipient');
    const keyed = await call(withKey(t.key, {
      method: 'POST', url: '/api/v1/proof/submissions/sessions', payload: { flowId: t.publicId, customer: { email: 'opt@example.com' } },
    }));
    assert.equal(keyed.statusCode, 409);
    assert.equal(keyed.json().error.details.reason, 'opted_out');
    const unknown = await customerCall({ method: 'POST', url: '/api/proof/collect/opt-out', headers: { 'x-link-token': `pr_${'B'.repeat(43)}` } });
    assert.equal(unknown.statusCode, 401);
    const stale = await sentRequest({ email: 'late@example.com' });
    await ctx.dataSource.query(`UPDATE proof_requests SET expires_at = now() - interval '1 second' WHERE id = $1`, [stale.id]);
    const expired = await customerCall(withLink(stale.token));
    assert.equal(expired.statusCode, 410);
    assert.equal(expired.json().code, 'EXPIRED');
  });

  it('a signed end user starts a session once per token; the prompt answers why it may not show', async () => {
    const token = endUserToken(t.product, { sub: 'user-prompt' });
    const started = await customerCall({
      method: 'POST', url: '/api/proof/collect/sessions', payload: { flowId: t.publicId, surface: 'in_app' }, headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(started.statusCode, 201, started.body);
    const replay = await customerCall({
      method: 'POST', url: '/api/proof/collect/sessions', payload: { flowId: t.publicId, surface: 'in_app' }, headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(replay.statusCode, 409);
    assert.equal(replay.json().code, 'ALREADY_USED');
    const wrongKind = await customerCall({ method: 'GET', url: `/api/proof/collect/prompt?flowId=${t.publicId}`,
      headers: { authorization: `Bearer ${t.key}` } });
    assert.equal(wrongKind.statusCode, 401);
    assert.equal(wrongKind.json().code, 'UNAUTHORIZED');
    const badOrigin = await customerCall({
      method: 'POST', url: '/api/proof/collect/sessions', payload: { flowId: t.publicId, surface: 'embedded' },
      headers: { authorization: `Bearer ${endUserToken(t.product, { sub: 'user-prompt' })}`, origin: 'https://evil.example' },
    });
    assert.equal(badOrigin.statusCode, 403);

    const prompt = async (sub: string) => (await customerCall({
      method: 'GET', url: `/api/proof/collect/prompt?flowId=${t.publicId}`, headers: { authorization: `Bearer ${endUserToken(t.product, { sub })}` },
    })).json().data;
    assert.deepEqual(await prompt('user-fresh'), { show: true, reason: 'eligible', channelPreference: null, nextEligibleAt: null });
    const answer = (sub: string, payload: object) => customerCall({
      method: 'POST', url: '/api/proof/collect/prompt', payload: { flowId: t.publicId, ...payload },
      headers: { authorization: `Bearer ${endUserToken(t.product, { sub })}` },
    });
    const later = await answer('user-later', { choice: 'not_now' });
    assert.equal(later.json().data.reason, 'not_now');
    assert.ok(later.json().data.nextEligibleAt);
    assert.equal((await answer('user-later', { choice: 'prefer_channel' })).statusCode, 400, 'prefer_channel needs a channel');
    assert.equal((await answer('user-later', { choice: 'prefer_channel', channel: 'email' })).json().data.channelPreference, 'email');
    assert.equal((await answer('user-never', { choice: 'never_ask' })).json().data.reason, 'never_ask');
    const blocked = await customerCall({
      method: 'POST', url: '/api/proof/collect/sessions', payload: { flowId: t.publicId, surface: 'in_app' },
      headers: { authorization: `Bearer ${endUserToken(t.product, { sub: 'user-never' })}` },
    });
    assert.equal(blocked.json().code, 'OPTED_OUT');

    const d = { id: started.json().data.draft.id, session: started.json().data.draftSession, body: {} };
    await fillDraft(t, d);
    assert.equal((await submitDraft(d)).statusCode, 201);
    assert.equal((await prompt('user-prompt')).reason, 'already_responded');
  });

  it('a key starts a draft for a custom UI, which then uses the draft routes', async () => {
    const res = await call(withKey(t.key, {
      method: 'POST', url: '/api/v1/proof/submissions/sessions', payload: { flowId: t.publicId, customer: { personRef: 'cus_900', name: 'Mary' } },
    }));
    assert.equal(res.statusCode, 201, res.body);
    const data = res.json().data;
    assert.equal(data.flowVersionId, t.flowVersionId);
    assert.equal(data.consentPolicy.wordingHash, t.wordingHash);
    assert.ok(data.uploadLimits.kinds.video > 0);
    const read = await customerCall(asDraft({ id: data.sessionId, session: data.draftSession, body: {} },
      { method: 'GET', url: `/api/proof/collect/drafts/${data.sessionId}` }));
    assert.equal(read.statusCode, 200);
    const other = await createCollectionTenant();
    const foreign = await call(withKey(other.key, { method: 'POST', url: '/api/v1/proof/submissions/sessions', payload: { flowId: t.publicId } }));
    assert.equal(foreign.statusCode, 404, 'another product\'s flow');
    const noScope = await call(withKey(t.readKey, { method: 'POST', url: '/api/v1/proof/submissions/sessions', payload: { flowId: t.publicId } }));
    assert.equal(noScope.statusCode, 403);
  });
});

import assert from 'node:assert/strict';
import { proposeOpportunity } from '../../db/integrations/opportunities';
import { newId } from '../../db/rules/ids';
import { Tenant, call, createTenant, errorCode, eventually, sessionFor, withKey } from '../support/fixtures';
import { as, liveFlow } from '../support/collection-setup';
import { ALL_PROOF_SCOPES, submissionBody, submit } from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import { bodyOf } from '../support/smtp-sink';
import { proofRequestWorkflowId } from '../../workflows/workflow-ids';
import { route } from '../support/routes';

const address = (tag: string) => `${tag}-${newId('x').slice(2, 12)}@customer.example`;

describe('ai: story requests from a draft, sent by a person, replies captured (docs/ai.md#requests-and-reply-capture)', () => {
  let t: Tenant;
  let flowId: string;

  const create = (payload: object, key = t.key) => call(withKey(key, { method: 'POST', url: '/api/v1/proof/requests', payload }));
  const send = (id: string, s = t.owner) => as(s, { method: 'POST', url: route('/api/proof/collect/requests/{id}', { id }), payload: { action: 'send' } });
  const replyTo = (id: string, payload: object, s = t.owner) => as(s, { method: 'POST', url: route('/api/workspace/proof/requests/{id}/replies', { id }),
    payload });
  const endUser = async (id: string, email: string | null, name: string | null = null) => ctx.dataSource.query(
    `INSERT INTO end_users (product_id, end_user_id, organization_id, email, name, updated_at) VALUES ($1, $2, $3, $4, $5, now())`,
    [t.product.id, id, t.organizationId, email, name]);

  before(async () => {
    t = await createTenant(ALL_PROOF_SCOPES);
    flowId = (await liveFlow(t)).flow.id;
  });

  it('a key makes a draft in the one requests table: the latest live flow, no link secret, nothing sent', async () => {
    const to = address('draft');
    await endUser('eu-draft', to, 'Ada');
    const res = await create({ channel: 'email', recipientId: 'eu-draft', message: 'Would you tell others how onboarding went?' });
    assert.equal(res.statusCode, 201, res.body);
    const data = res.json().data;
    assert.equal(data.status, 'draft');
    assert.equal(data.formId, flowId, 'the product\'s latest live flow');
    assert.equal(data.recipientId, 'eu-draft');
    assert.deepEqual(data.createdBy, { type: 'service_key', id: t.keyId });
    assert.equal(data.sentAt, null);
    assert.doesNotMatch(res.body, /pr_[A-Za-z0-9_-]{43}/, 'no link secret goes to a key');
    const [row] = await ctx.dataSource.query('SELECT status, link_token_hash, recipient FROM proof_requests WHERE id = $1', [data.id]);
    assert.equal(row.status, 'draft');
    assert.equal(row.link_token_hash, null);
    assert.deepEqual(row.recipient, { endUserId: 'eu-draft', email: to, name: 'Ada' });
    assert.equal(ctx.smtpSink.to(to).length, 0, 'nothing is sent');
    const listed = (await as(t.owner, { method: 'GET', url: '/api/proof/collect/requests?status=draft' })).json().data;
    assert.ok(listed.some((r: { id: string }) => r.id === data.id), 'the workspace lists it with its other requests');
  });

  it('a key is never answered the recipient\'s contact data: an end user\'s or a story person\'s e-mail and name stay out of the answer', async () => {
    const userMail = address('contact-eu');
    await endUser('eu-contact', userMail, 'Grace Contact');
    const personRef = `person-${newId('p')}`;
    const personMail = address('contact-person');
    await submit(t, submissionBody({ customer: { personRef, email: personMail, name: 'Linus Contact' } }));
    for (const [recipientId, mail, name] of [['eu-contact', userMail, 'Grace Contact'], [personRef, personMail, 'Linus Contact']]) {
      const res = await create({ channel: 'email', recipientId, message: 'Would you tell others how onboarding went?' });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().data.recipientId, recipientId);
      assert.equal(res.json().data.recipient, undefined, 'no recipient object goes to a key');
      assert.ok(!res.body.includes(mail) && !res.body.includes(name), `the answer holds no e-mail or name: ${res.body}`);
      const [row] = await ctx.dataSource.query('SELECT recipient FROM proof_requests WHERE id = $1', [res.json().data.id]);
      assert.equal(row.recipient.email, mail, 'the workspace keeps the address to send to');
    }
  });

  it('a person sends it: e-mail delivered, proof.request.sent in the ledger and as a webhook with only its allow-listed properties', async () => {
    const to = address('send');
    await endUser('eu-send', to);
    const { id } = (await create({ channel: 'email', recipientId: 'eu-send', message: 'Tell us how it went' })).json().data;
    const keyed = await call(withKey(t.key, { method: 'POST', url: `/api/proof/collect/requests/${id}`, payload: { action: 'send' } }));
    assert.equal(keyed.statusCode, 403, 'sending needs a human');
    const sent = await send(id);
    assert.equal(sent.statusCode, 200, sent.body);
    assert.equal(sent.json().data.request.status, 'sent');
    const [mail] = await eventually(async () => (ctx.smtpSink.to(to).length ? ctx.smtpSink.to(to) : undefined));
    assert.match(bodyOf(mail.raw), /Tell us how it went/);
    const [event] = await eventually(async () => {
      const rows = await ctx.dataSource.query(
        `SELECT id, properties FROM proof_events WHERE event_type = 'proof.request.sent' AND properties->>'requestId' = $1`, [id]);
      return rows.length ? rows : undefined;
    });
    assert.deepEqual(event.properties, { requestId: id, channel: 'email', reminder: false });
    const [hook] = await ctx.dataSource.query(`SELECT payload FROM outbox_events WHERE id = $1`, [`evt_${event.id}`]);
    assert.deepEqual(hook.payload.properties, { requestId: id, channel: 'email', reminder: false });
  });

  it('a link request gets its secret when a person sends it, once', async () => {
    const { id } = (await create({ channel: 'link' })).json().data;
    const sent = await send(id);
    assert.equal(sent.statusCode, 200, sent.body);
    assert.match(sent.json().data.linkToken, /^pr_[A-Za-z0-9_-]{43}$/);
  });

  it('an opportunity names the person and becomes accepted; a decided one is 409; unknown ids are 404 naming the path', async () => {
    const opp = await proposeOpportunity(ctx.dataSource.manager, {
      organizationId: t.organizationId, productId: t.product.id, trigger: 'milestone', personRef: `person-${newId('p')}`, ttlDays: 30,
    });
    const res = await create({ channel: 'room', opportunityId: opp.id, formId: flowId });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().data.recipientId, opp.personRef);
    assert.equal(res.json().data.opportunityId, opp.id);
    const [o] = await ctx.dataSource.query('SELECT state, request_id FROM proof_opportunities WHERE id = $1', [opp.id]);
    assert.deepEqual(o, { state: 'accepted', request_id: res.json().data.id });
    assert.equal((await create({ channel: 'room', opportunityId: opp.id })).statusCode, 409);
    const noOpp = await create({ channel: 'link', opportunityId: 'opp_unknown' });
    assert.equal(noOpp.statusCode, 404);
    assert.deepEqual(noOpp.json().error.details, [{ path: 'opportunityId', message: 'no such opportunity' }]);
    const noForm = await create({ channel: 'link', formId: 'flw_unknown' });
    assert.equal(noForm.statusCode, 404);
    assert.equal(noForm.json().error.details[0].path, 'formId');
  });

  it('refusals: a named channel without a recipient 400, no e-mail known 400, unknown property 400, no live flow 409', async () => {
    const none = await create({ channel: 'support' });
    assert.equal(none.statusCode, 400);
    assert.equal(none.json().error.details[0].path, 'recipientId');
    const noMail = await create({ channel: 'email', recipientId: 'nobody-known' });
    assert.equal(noMail.statusCode, 400);
    assert.equal(noMail.json().error.details[0].path, 'recipientId');
    assert.equal((await create({ channel: 'link', recipient: { email: 'a@b.example' } })).statusCode, 400);
    assert.equal((await create({ channel: 'fax' })).statusCode, 400);
    const bare = await createTenant(ALL_PROOF_SCOPES);
    const noFlow = await create({ channel: 'link' }, bare.key);
    assert.equal(noFlow.statusCode, 409);
    assert.equal(errorCode(noFlow), 'CONFLICT');
  });

  it('a message that gates reviews or conditions a reward on sentiment is 422 ASK_POLICY_FAILED and stores nothing', async () => {
    const before = (await ctx.dataSource.query('SELECT count(*)::int AS n FROM proof_requests WHERE product_id = $1', [t.product.id]))[0].n;
    const gating = await create({ channel: 'link', message: 'If you\'re happy with us, please leave a review!' });
    assert.equal(gating.statusCode, 422, gating.body);
    assert.equal(errorCode(gating), 'ASK_POLICY_FAILED');
    assert.deepEqual(gating.json().error.details.failed, ['no_review_gating']);
    const reward = await create({ channel: 'link', message: 'Leave a positive review and get a free month.' });
    assert.deepEqual(reward.json().error.details.failed, ['no_review_gating', 'no_sentiment_conditioned_reward']);
    const after = (await ctx.dataSource.query('SELECT count(*)::int AS n FROM proof_requests WHERE product_id = $1', [t.product.id]))[0].n;
    assert.equal(after, before);
  });

  it('an opted-out recipient: creation 409 CONFLICT details.reason opted_out; a draft whose recipient opted out later is not sent (OPTED_OUT)', async () => {
    const to = address('optout');
    await endUser('eu-opt', to);
    const { id } = (await create({ channel: 'email', recipientId: 'eu-opt' })).json().data;
    await ctx.dataSource.query(
      `INSERT INTO collection_suppressions (organization_id, product_id, recipient_key, via) VALUES ($1, $2, $3, 'opt_out')`,
      [t.organizationId, t.product.id, 'end_user:eu-opt']);
    const refused = await create({ channel: 'email', recipientId: 'eu-opt' });
    assert.equal(refused.statusCode, 409);
    assert.equal(errorCode(refused), 'CONFLICT');
    assert.equal(refused.json().error.details.reason, 'opted_out');
    const byPerson = await create({ channel: 'link', recipientId: 'eu-opt' });
    assert.equal(byPerson.statusCode, 409, 'the same id as a person is the same person');
    const blocked = await send(id);
    assert.equal(blocked.statusCode, 409);
    assert.equal(blocked.json().code, 'OPTED_OUT');
    const [row] = await ctx.dataSource.query('SELECT status FROM proof_requests WHERE id = $1', [id]);
    assert.equal(row.status, 'draft');
    assert.equal(ctx.smtpSink.to(to).length, 0);
  });

  it('tenant isolation: another tenant\'s form or opportunity is 404; its request is 404 to send and to reply', async () => {
    const other = await createTenant(ALL_PROOF_SCOPES);
    assert.equal((await create({ channel: 'link', formId: flowId }, other.key)).statusCode, 404);
    const { id } = (await create({ channel: 'link' })).json().data;
    assert.equal((await send(id, other.owner)).statusCode, 404);
    assert.equal((await replyTo(id, { text: 'Hi', receivedAt: new Date().toISOString() }, other.owner)).statusCode, 404);
  });

  it('an e-mail reply captured by a person: a submitted story with no grant, the request responded, proof.reply.captured; owner or admin only', async () => {
    const to = address('reply');
    await endUser('eu-reply', to, 'Grace');
    const { id } = (await create({ channel: 'email', recipientId: 'eu-reply' })).json().data;
    const early = await replyTo(id, { text: 'Sure!', receivedAt: new Date().toISOString() });
    assert.equal(early.statusCode, 409, 'a draft was never sent, so nobody replied');
    await send(id);
    const handle = ctx.temporal.workflow.getHandle(proofRequestWorkflowId(id));
    await eventually(async () => ctx.smtpSink.to(to).length === 1);
    const member = await sessionFor(t.organizationId, 'member');
    const text = 'We cut onboarding from 9 days to 2. Happy to be quoted.';
    assert.equal((await replyTo(id, { text, receivedAt: new Date().toISOString() }, member)).statusCode, 403);
    const keyed = await call(withKey(t.key, { method: 'POST', url: `/api/workspace/proof/requests/${id}/replies`,
      payload: { text, receivedAt: new Date().toISOString() } }));
    assert.equal(keyed.statusCode, 403);
    assert.equal((await replyTo(id, { text: '', receivedAt: new Date().toISOString() })).statusCode, 400);
    assert.equal((await replyTo(id, { text, receivedAt: 'yesterday' })).statusCode, 400);
    assert.equal((await replyTo(id, { text, receivedAt: '2001-01-01T00:00:00Z' })).statusCode, 400, 'before the request was sent');
    const receivedAt = new Date().toISOString();
    const res = await replyTo(id, { text, receivedAt });
    assert.equal(res.statusCode, 201, res.body);
    const { request, proofItemId, versionId } = res.json().data;
    assert.equal(request.status, 'responded');
    assert.equal(request.respondedAt, receivedAt);
    const [item] = await ctx.dataSource.query(
      'SELECT status, customer_person_id, customer_email, original_version_id FROM proof_items WHERE id = $1', [proofItemId]);
    assert.deepEqual(item, { status: 'submitted', customer_person_id: 'eu-reply', customer_email: to, original_version_id: versionId });
    const [version] = await ctx.dataSource.query('SELECT content, is_original FROM proof_versions WHERE id = $1', [versionId]);
    assert.deepEqual(version, { content: { text }, is_original: true });
    const grants = await ctx.dataSource.query('SELECT id FROM consent_grants WHERE proof_item_id = $1', [proofItemId]);
    assert.equal(grants.length, 0, 'no grant: it renders nowhere');
    const [event] = await ctx.dataSource.query(`SELECT id, properties FROM proof_events WHERE event_type = 'proof.reply.captured' AND proof_item_id = $1`,
      [proofItemId]);
    assert.equal(event.properties.requestId, id);
    const [hook] = await ctx.dataSource.query(`SELECT payload FROM outbox_events WHERE id = $1`, [`evt_${event.id}`]);
    assert.deepEqual(hook.payload.properties, { requestId: id });
    assert.equal(await handle.result(), 'responded', 'the request\'s workflow heard of it through the outbox');
    assert.equal((await replyTo(id, { text, receivedAt })).statusCode, 409, 'one reply closes the request');
  });
});

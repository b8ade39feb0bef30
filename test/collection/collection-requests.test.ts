import assert from 'node:assert/strict';
import { FastifyInstance } from 'fastify';
import { requestByToken } from '../../db/collection/drafts';
import { requestIdByLinkToken } from '../../db/collection/requests';
import { proposeOpportunity } from '../../db/integrations/opportunities';
import { newId } from '../../db/rules/ids';
import { sha256Hex } from '../../db/rules/secrets';
import { Tenant, createTenant, eventually, sessionFor, settledHandle, withKey } from '../support/fixtures';
import { Session, as, liveFlow } from '../support/collection-setup';
import { ALL_PROOF_SCOPES, submissionBody, submit } from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import { bodyOf } from '../support/smtp-sink';
import { approvalLinkWorkflowId, proofRequestWorkflowId } from '../../workflows/workflow-ids';
import { route } from '../support/routes';

const TOKEN = /pr_[A-Za-z0-9_-]{43}/;
const address = (tag: string) => `${tag}-${newId('x').slice(2, 12)}@customer.example`;

describe('collection setup: personal requests, candidates, routing, corrections, approval links', () => {
  let t: Tenant;
  let member: Session;
  let flow: { id: string; publicId: string };
  let versionId: string;
  let app: FastifyInstance;

  const create = (payload: object, s: Session = t.owner) => as(s, { method: 'POST', url: '/api/proof/collect/requests', payload }, app);
  const act = (id: string, payload: object, s: Session = t.owner) => as(s, { method: 'POST', url: route('/api/proof/collect/requests/{id}', { id }), payload },
    app);

  before(async () => {
    t = await createTenant(ALL_PROOF_SCOPES);
    member = await sessionFor(t.organizationId, 'member');
    // A "day" of request timers is half a second here, so a remindAfterDays of 1 fires within the test.
    app = await ctx.buildApp({ proofRequestDayMs: 500 });
    const live = await liveFlow(t, app);
    flow = live.flow;
    versionId = live.version.id;
  });

  it('a request\'s link secret is returned once and stored only as its SHA-256; it pins the live version', async () => {
    const res = await create({ flowId: flow.id, channel: 'link', recipient: { personRef: 'cust-1', name: 'Grace' }, message: 'Would you share?' });
    assert.equal(res.statusCode, 201, res.body);
    const { request, linkToken, linkUrl } = res.json().data;
    assert.match(linkToken, new RegExp(`^${TOKEN.source}$`));
    assert.equal(linkUrl, `${ctx.config.collectPageUrl}/r#${linkToken}`);
    assert.equal(request.status, 'draft');
    assert.equal(request.flowVersionId, versionId);
    const [row] = await ctx.dataSource.query('SELECT * FROM proof_requests WHERE id = $1', [request.id]);
    assert.equal(row.link_token_hash, sha256Hex(linkToken));
    assert.ok(!JSON.stringify(row).includes(linkToken), 'the secret itself is nowhere in the row');
    const listed = await as(member, { method: 'GET', url: '/api/proof/collect/requests' }, app);
    assert.ok(!listed.body.includes(linkToken), 'never in a list');
    assert.equal(await requestIdByLinkToken(ctx.dataSource, linkToken), request.id);
  });

  it('send, one reminder and cancel for a link request; wrong status is 409; members and keys cannot act', async () => {
    const { request } = (await create({ flowId: flow.id, channel: 'link', recipient: { personRef: 'cust-2' } })).json().data;
    assert.equal((await act(request.id, { action: 'send' }, member)).statusCode, 403);
    const keyed = await app.inject(withKey(t.key, { method: 'POST', url: `/api/proof/collect/requests/${request.id}`, payload: { action: 'send' } }));
    assert.equal(keyed.statusCode, 403);
    assert.equal((await act(request.id, { action: 'remind' })).statusCode, 409, 'a draft is not reminded');
    const sent = await act(request.id, { action: 'send' });
    assert.equal(sent.statusCode, 200, sent.body);
    assert.equal(sent.json().data.request.status, 'sent');
    assert.equal(sent.json().data.linkToken, undefined, 'the token was issued at creation, so it is not issued again');
    assert.equal((await act(request.id, { action: 'send' })).statusCode, 409);
    const reminded = await act(request.id, { action: 'remind' });
    assert.equal(reminded.statusCode, 200, reminded.body);
    assert.equal(reminded.json().data.request.status, 'reminded');
    assert.equal((await act(request.id, { action: 'remind' })).statusCode, 409, 'exactly one reminder');
    const cancelled = await act(request.id, { action: 'cancel' });
    assert.equal(cancelled.json().data.request.status, 'cancelled');
    assert.equal((await act(request.id, { action: 'cancel' })).statusCode, 409);
    const events = await ctx.dataSource.query(
      `SELECT properties FROM proof_events WHERE event_type = 'proof.request.sent' AND properties->>'requestId' = $1 ORDER BY created_at`, [request.id]);
    assert.deepEqual(events.map((e: { properties: { reminder: boolean } }) => e.properties.reminder), [false, true]);
    const d = await (await settledHandle(proofRequestWorkflowId(request.id))).describe();
    assert.deepEqual(d.memo, { organizationId: t.organizationId, productId: t.product.id });
    const commands = await ctx.dataSource.query(
      'SELECT command FROM workflow_commands WHERE ordering_key = $1 ORDER BY seq', [proofRequestWorkflowId(request.id)]);
    assert.deepEqual(commands.map((c: { command: { type: string; outcome?: string } }) => [c.command.type, c.command.outcome]),
      [['proof.request.start', undefined], ['proof.request.closed', 'cancelled']], 'the send and the cancel reach the workflow through the outbox');
  });

  it('e-mail: 503 without SMTP_URL; delivered to the SMTP sink with the link, nothing secret in the subject; the mailed link is stored as a hash', async () => {
    const to = address('mail');
    const { request } = (await create({ flowId: flow.id, channel: 'email', recipient: { email: to, name: 'Ada' }, message: 'Tell us how it went' })).json()
      .data;
    const noMail = await ctx.buildApp({ smtpUrl: undefined });
    const refused = await as(t.owner, { method: 'POST', url: `/api/proof/collect/requests/${request.id}`, payload: { action: 'send' } }, noMail);
    assert.equal(refused.statusCode, 503);
    assert.equal(refused.json().code, 'UNAVAILABLE');
    const sent = await act(request.id, { action: 'send' });
    assert.equal(sent.statusCode, 200, sent.body);
    const [mail] = await eventually(async () => (ctx.smtpSink.to(to).length ? ctx.smtpSink.to(to) : undefined));
    assert.doesNotMatch(mail.subject, TOKEN);
    assert.doesNotMatch(mail.subject, /https?:/);
    const body = bodyOf(mail.raw);
    assert.match(body, /Tell us how it went/);
    const token = TOKEN.exec(body)![0];
    assert.ok(body.includes(`${ctx.config.collectPageUrl}/r#${token}`));
    assert.equal(await requestIdByLinkToken(ctx.dataSource, token), request.id);
    assert.equal((await requestByToken(ctx.dataSource, token))?.id, request.id, 'the mailed link opens the customer form');
    const stored = await ctx.dataSource.query('SELECT digest FROM proof_request_tokens WHERE request_id = $1', [request.id]);
    assert.deepEqual(stored.map((r: { digest: string }) => r.digest), [sha256Hex(token)]);
    const missing = await create({ flowId: flow.id, channel: 'email', recipient: { personRef: 'no-mail' } });
    assert.equal(missing.statusCode, 400);
  });

  it('exactly one reminder even when its delivery is retried and two people press remind at once', async () => {
    const to = address('retry');
    const { request } = (await create({ flowId: flow.id, channel: 'email', recipient: { email: to } })).json().data;
    await act(request.id, { action: 'send' });
    await eventually(async () => ctx.smtpSink.to(to).length === 1);
    ctx.smtpSink.refuseNext(1);
    const [a, b] = await Promise.all([act(request.id, { action: 'remind' }), act(request.id, { action: 'remind' })]);
    assert.deepEqual([a.statusCode, b.statusCode].sort(), [200, 409]);
    await eventually(async () => ctx.smtpSink.to(to).length === 2);
    const reminders = ctx.smtpSink.to(to).filter((m) => m.subject.startsWith('Reminder'));
    assert.equal(reminders.length, 1);
    const [row] = await ctx.dataSource.query('SELECT status, reminded_at FROM proof_requests WHERE id = $1', [request.id]);
    assert.equal(row.status, 'reminded');
    const deliveries = await ctx.dataSource.query(`SELECT kind FROM proof_request_deliveries WHERE request_id = $1 AND delivered_at IS NOT NULL ORDER BY kind`,
      [request.id]);
    assert.deepEqual(deliveries.map((d: { kind: string }) => d.kind), ['initial', 'reminder']);
  });

  it('the timer\'s reminder is the one reminder: a person\'s later remind is 409', async () => {
    const to = address('timer');
    const { request } = (await create({ flowId: flow.id, channel: 'email', recipient: { email: to } })).json().data;
    const sent = await act(request.id, { action: 'send', remindAfterDays: 1 });
    assert.equal(sent.json().data.request.remindAfterDays, 1);
    await eventually(async () => ctx.smtpSink.to(to).some((m) => m.subject.startsWith('Reminder')));
    await eventually(async () => (await ctx.dataSource.query('SELECT status FROM proof_requests WHERE id = $1', [request.id]))[0].status === 'reminded');
    assert.equal((await act(request.id, { action: 'remind' })).statusCode, 409);
    assert.equal(ctx.smtpSink.to(to).filter((m) => m.subject.startsWith('Reminder')).length, 1);
  });

  it('bulk: draft requests only, nothing sent; opted-out and uncontactable recipients are skipped', async () => {
    const [a, b, c] = [address('bulk-a'), address('bulk-b'), address('bulk-c')];
    await ctx.dataSource.query(
      `INSERT INTO collection_suppressions (organization_id, product_id, recipient_key, via) VALUES ($1, $2, $3, 'opt_out')`,
      [t.organizationId, t.product.id, `email:${b}`]);
    const res = await as(t.owner, {
      method: 'POST', url: '/api/proof/collect/requests/bulk',
      payload: { flowId: flow.id, channel: 'email', recipients: [{ email: a }, { email: b }, { personRef: 'p-no-mail' }, { email: c }] },
    }, app);
    assert.equal(res.statusCode, 201, res.body);
    const { created, skipped } = res.json().data;
    assert.deepEqual(created.map((x: { index: number }) => x.index), [0, 3]);
    assert.deepEqual(skipped, [{ index: 1, reason: 'opted_out' }, { index: 2, reason: 'missing_contact' }]);
    for (const x of created) assert.match(x.linkToken, TOKEN);
    const statuses = await ctx.dataSource.query('SELECT status FROM proof_requests WHERE id = ANY($1)',
      [created.map((x: { requestId: string }) => x.requestId)]);
    assert.deepEqual(statuses.map((s: { status: string }) => s.status), ['draft', 'draft']);
    assert.equal(ctx.smtpSink.to(a).length + ctx.smtpSink.to(c).length, 0, 'nothing is sent without an operator action');
    const single = await create({ flowId: flow.id, channel: 'email', recipient: { email: b } });
    assert.equal(single.statusCode, 409);
    assert.equal(single.json().code, 'OPTED_OUT');
  });

  it('outcome candidates: accept makes a draft request with its link, dismiss closes; a decided candidate is 409', async () => {
    const [one, two] = await Promise.all([1, 2].map(() => proposeOpportunity(ctx.dataSource.manager, {
      organizationId: t.organizationId, productId: t.product.id, trigger: 'milestone', personRef: `person-${newId('p')}`, strength: 80, ttlDays: 30,
    })));
    const listed = (await as(member, { method: 'GET', url: '/api/proof/collect/requests/outcome?state=proposed' }, app)).json().data;
    assert.ok(listed.some((c: { id: string }) => c.id === one.id));
    const accepted = await as(t.owner, { method: 'POST', url: '/api/proof/collect/requests/outcome',
      payload: { candidateId: one.id, action: 'accept', flowId: flow.id, channel: 'link' } }, app);
    assert.equal(accepted.statusCode, 201, accepted.body);
    assert.equal(accepted.json().data.request.status, 'draft');
    assert.equal(accepted.json().data.request.opportunityId, one.id);
    assert.equal(accepted.json().data.candidate.state, 'accepted');
    assert.match(accepted.json().data.linkToken, TOKEN);
    const again = await as(t.owner, { method: 'POST', url: '/api/proof/collect/requests/outcome', payload: { candidateId: one.id, action: 'dismiss' } }, app);
    assert.equal(again.statusCode, 409);
    const dismissed = await as(t.owner, { method: 'POST', url: '/api/proof/collect/requests/outcome', payload: { candidateId: two.id, action: 'dismiss' } },
      app);
    assert.equal(dismissed.json().data.candidate.state, 'dismissed');
    const other = await createTenant();
    const foreign = await as(other.owner, { method: 'POST', url: '/api/proof/collect/requests/outcome', payload: { candidateId: two.id, action: 'dismiss' } },
      app);
    assert.equal(foreign.statusCode, 404);
  });

  it('routing: every band is listed and moves only forward; corrections close once with a note', async () => {
    const s = await submit(t, undefined, app);
    for (const [band, score, followUp] of [['detractor', 3, 'support_room'], ['passive', 7, 'check_in'], ['promoter', 10, 'story_invite']] as const) {
      await ctx.dataSource.query(
        `INSERT INTO proof_routings (id, organization_id, product_id, proof_item_id, flow_id, flow_version_id, scale, score, band, follow_up, state)
         VALUES ($1, $2, $3, $4, $5, $6, 'nps', $7, $8, $9, 'new')`,
        [newId('rte'), t.organizationId, t.product.id, s.proofItemId, flow.id, versionId, score, band, followUp]);
    }
    const routing = (await as(member, { method: 'GET', url: '/api/proof/collect/routing' }, app)).json().data;
    assert.deepEqual(routing.map((r: { band: string }) => r.band).sort(), ['detractor', 'passive', 'promoter']);
    const detractor = routing.find((r: { band: string }) => r.band === 'detractor');
    const moved = await as(t.owner, { method: 'PATCH', url: `/api/proof/collect/routing/${detractor.id}`,
      payload: { state: 'in_progress', roomId: 'room_123' } }, app);
    assert.equal(moved.json().data.state, 'in_progress');
    assert.equal(moved.json().data.roomId, 'room_123');
    assert.equal((await as(t.owner, { method: 'PATCH', url: `/api/proof/collect/routing/${detractor.id}`, payload: { state: 'new' } }, app)).statusCode, 409);
    assert.equal((await as(member, { method: 'PATCH', url: `/api/proof/collect/routing/${detractor.id}`, payload: { state: 'done' } }, app)).statusCode, 403);

    const correctionId = newId('cor');
    await ctx.dataSource.query(
      `INSERT INTO proof_corrections (id, organization_id, product_id, proof_item_id, message, status) VALUES ($1, $2, $3, $4, 'Please fix my title', 'open')`,
      [correctionId, t.organizationId, t.product.id, s.proofItemId]);
    assert.equal((await as(t.owner, { method: 'PATCH', url: `/api/proof/collect/corrections/${correctionId}`, payload: { status: 'closed', note: 'x' } },
      app)).statusCode, 400);
    const closed = await as(t.owner, { method: 'PATCH', url: `/api/proof/collect/corrections/${correctionId}`,
      payload: { status: 'closed', note: 'Fixed the title' } }, app);
    assert.equal(closed.statusCode, 200, closed.body);
    assert.equal(closed.json().data.note, 'Fixed the title');
    assert.ok(closed.json().data.closedAt);
    assert.equal((await as(t.owner, { method: 'PATCH', url: `/api/proof/collect/corrections/${correctionId}`,
      payload: { status: 'closed', note: 'Again, fixed' } }, app)).statusCode, 409);
    const listed = (await as(member, { method: 'GET', url: '/api/proof/collect/corrections?status=closed' }, app)).json().data;
    assert.ok(listed.some((c: { id: string }) => c.id === correctionId));
    const other = await createTenant();
    assert.equal((await as(other.owner, { method: 'PATCH', url: `/api/proof/collect/corrections/${correctionId}`,
      payload: { status: 'closed', note: 'Not mine' } }, app)).statusCode, 404);
  });

  it('approval link: no secret in the answer, a control link by e-mail through the sink stored as a hash; 503 without a mailer; revoked is REVOKED_FINAL',
    async () => {
      const to = address('approval');
      const s = await submit(t, submissionBody({ customer: { personRef: `cus-${newId('p')}`, email: to, name: 'Ada' } }), app);
      const url = `/api/proof/collect/items/${s.proofItemId}/approval-link`;
      const plain = await as(t.owner, { method: 'POST', url, payload: { deliver: 'none' } }, app);
      assert.equal(plain.statusCode, 201, plain.body);
      assert.deepEqual(plain.json().data, { delivered: 'none', expiresAt: null }, 'docs/collection.md#setup-teammates: never controlToken or controlUrl');
      const noMail = await ctx.buildApp({ smtpUrl: undefined });
      assert.equal((await as(t.owner, { method: 'POST', url, payload: { deliver: 'email' } }, noMail)).statusCode, 503);
      const mailed = await as(t.owner, { method: 'POST', url, payload: { deliver: 'email' } }, app);
      assert.equal(mailed.json().data.delivered, 'email');
      const [mail] = await eventually(async () => (ctx.smtpSink.to(to).length ? ctx.smtpSink.to(to) : undefined));
      assert.doesNotMatch(mail.subject, /ct_/);
      const mailedToken = new RegExp(`${ctx.config.collectPageUrl.replace(/[.]/g, '\\.')}/control#(ct_[A-Za-z0-9_-]{43})`).exec(bodyOf(mail.raw))?.[1];
      assert.ok(mailedToken, 'the e-mail carries the control link');
      assert.doesNotMatch(mailed.body, /ct_/);
      const secrets = await ctx.dataSource.query(`SELECT digest FROM collection_secrets WHERE digest = $1`, [sha256Hex(mailedToken)]);
      assert.equal(secrets.length, 1);
      const [command] = await ctx.dataSource.query(
      `SELECT command FROM workflow_commands WHERE command->>'type' = 'collection.approval_link.deliver' AND command->>'proofItemId' = $1`, [s.proofItemId]);
      assert.equal(command.command.channel, 'email', 'the delivery was asked for through the outbox, in the link\'s transaction');
      assert.ok(!JSON.stringify(command).includes('ct_'), 'no secret in the outbox');
      const run = await ctx.temporal.workflow.getHandle(approvalLinkWorkflowId(s.proofItemId, command.command.deliveryId)).describe();
      assert.deepEqual(run.memo, { organizationId: t.organizationId, productId: t.product.id });
      assert.equal((await as(member, { method: 'POST', url, payload: { deliver: 'none' } }, app)).statusCode, 403);
      const other = await createTenant();
      assert.equal((await as(other.owner, { method: 'POST', url, payload: { deliver: 'none' } }, app)).statusCode, 404);
      await ctx.dataSource.query(`UPDATE proof_items SET status = 'revoked', revoked_at = now() WHERE id = $1`, [s.proofItemId]);
      const revoked = await as(t.owner, { method: 'POST', url, payload: { deliver: 'none' } }, app);
      assert.equal(revoked.statusCode, 409);
      assert.equal(revoked.json().code, 'REVOKED_FINAL');
    });
});

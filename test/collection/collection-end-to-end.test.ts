import assert from 'node:assert/strict';
import { FastifyInstance } from 'fastify';
import { newId } from '../../db/rules/ids';
import { Tenant, createTenant, eventually, settledHandle } from '../support/fixtures';
import { as, liveFlow } from '../support/collection-setup';
import { ctx } from '../support/root-hooks';
import { bodyOf } from '../support/smtp-sink';
import { proofRequestWorkflowId } from '../../workflows/workflow-ids';

describe('collection setup end to end: a mailed request answered through the customer routes is routed', () => {
  let t: Tenant;
  let app: FastifyInstance;

  before(async () => {
    t = await createTenant();
    app = await ctx.buildApp();
  });

  it('build, publish, send by e-mail; the customer answers with a detractor score; the request is responded and the response routed', async () => {
    const { flow, question, version } = await liveFlow(t, app);
    const to = `e2e-${newId('x').slice(2, 12)}@customer.example`;
    const made = (await as(t.owner, { method: 'POST', url: '/api/proof/collect/requests',
      payload: { flowId: flow.id, channel: 'email', recipient: { email: to, personRef: `p-${to}` } } }, app)).json().data;
    const sent = await as(t.owner, { method: 'POST', url: `/api/proof/collect/requests/${made.request.id}`, payload: { action: 'send' } }, app);
    assert.equal(sent.statusCode, 200, sent.body);
    const [mail] = await eventually(async () => (ctx.smtpSink.to(to).length ? ctx.smtpSink.to(to) : undefined));
    const token = /#(pr_[A-Za-z0-9_-]{43})/.exec(bodyOf(mail.raw))![1];

    const opened = await app.inject({ method: 'POST', url: '/api/proof/collect/drafts', headers: { 'x-link-token': token }, payload: {} });
    assert.equal(opened.statusCode, 201, opened.body);
    const { draft, draftSession } = opened.json().data;
    assert.equal(draft.flowVersionId, version.id, 'the draft pins the request\'s version');
    const headers = { 'x-draft-session': draftSession };
    const patched = await app.inject({
      method: 'PATCH', url: `/api/proof/collect/drafts/${draft.id}`, headers,
      payload: { text: 'Setup was slow, support was great.', rating: 4, consentAccepted: true, answers: { [question.questionId]: 'Faster onboarding' } },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    const submitted = await app.inject({ method: 'POST', url: `/api/proof/collect/drafts/${draft.id}/submit`, headers, payload: {} });
    assert.equal(submitted.statusCode, 201, submitted.body);
    const { proofItemId } = submitted.json().data;

    const request = (await as(t.owner, { method: 'GET', url: `/api/proof/collect/requests/${made.request.id}` }, app)).json().data.request;
    assert.equal(request.status, 'responded');
    const routing = (await as(t.owner, { method: 'GET', url: '/api/proof/collect/routing' }, app)).json().data;
    const routed = routing.find((r: { proofItemId: string }) => r.proofItemId === proofItemId);
    assert.ok(routed, 'a detractor is routed too');
    assert.equal(routed.scale, 'nps');
    assert.equal(routed.band, 'detractor');
    assert.equal(routed.followUp, 'support_room');
    assert.equal(await eventually(async () => {
      const d = await (await settledHandle(proofRequestWorkflowId(made.request.id))).describe();
      return d.status.name === 'RUNNING' ? undefined : d.status.name;
    }), 'COMPLETED');
  });
});

import assert from 'node:assert/strict';
import { Resvg } from '@resvg/resvg-js';
import jsQR from 'jsqr';
import { servedFlow } from '../../db/collection/flows';
import { Tenant, createTenant, sessionFor, withKey } from '../support/fixtures';
import { Session, as, liveFlow, newQuestion, publishTemplate } from '../support/collection-setup';
import { ctx } from '../support/root-hooks';
import { route } from '../support/routes';

describe('collection setup: flows, questions, consent templates', () => {
  let t: Tenant;
  let member: Session;
  let admin: Session;

  before(async () => {
    t = await createTenant();
    member = await sessionFor(t.organizationId, 'member');
    admin = await sessionFor(t.organizationId, 'admin');
  });

  it('a teammate builds a flow from a question and a consent template and publishes it; the live link serves the latest version', async () => {
    const { flow, template, question, version } = await liveFlow(t);
    assert.equal(version.versionNumber, 1);
    assert.match(version.contentHash, /^sha256:[0-9a-f]{64}$/);
    assert.equal(flow.state, 'draft');
    const read = (await as(member, { method: 'GET', url: `/api/proof/collect/forms/${flow.id}` })).json().data;
    assert.equal(read.state, 'live');
    assert.equal(read.liveVersionId, version.id);
    assert.equal(read.consentTemplate.id, template.id);
    assert.deepEqual(read.allowance.limit, ctx.config.proofMonthlySubmissionAllowance);
    assert.equal(read.liveUrl, `${ctx.config.collectPageUrl}/f/${flow.publicId}`);
    const list = (await as(member, { method: 'GET', url: '/api/proof/collect/forms' })).json().data;
    assert.ok(list.some((f: { id: string }) => f.id === flow.id));
    await as(t.owner, { method: 'POST', url: '/api/proof/collect/forms', payload: { productId: t.product.id, name: 'Second' } });
    const first = (await as(member, { method: 'GET', url: '/api/proof/collect/forms?limit=1' })).json();
    assert.equal(first.data.length, 1);
    assert.ok(first.nextCursor);
    const second = (await as(member, { method: 'GET', url: `/api/proof/collect/forms?limit=1&cursor=${first.nextCursor}` })).json();
    assert.equal(second.data.length, 1);
    assert.notEqual(second.data[0].id, first.data[0].id);
    assert.equal((await as(member, { method: 'GET', url: '/api/proof/collect/forms?limit=101' })).statusCode, 400);

    // Editing the draft changes nothing live until the next publish; then the live link serves version 2.
    const saved = await as(admin, { method: 'PATCH', url: `/api/proof/collect/forms/${flow.id}`,
      payload: { draftRevision: read.draftRevision, definition: { title: 'Tell us more' } } });
    assert.equal(saved.statusCode, 200, saved.body);
    assert.equal((await servedFlow(ctx.dataSource.manager, flow.publicId)).version.id, version.id);
    const stale = await as(admin, { method: 'PATCH', url: `/api/proof/collect/forms/${flow.id}`, payload: { draftRevision: read.draftRevision, name: 'x' } });
    assert.equal(stale.statusCode, 409);
    assert.equal(stale.json().code, 'CONFLICT');
    const staleePublish = await as(admin, { method: 'POST', url: `/api/proof/collect/forms/${flow.id}`, payload: { draftRevision: read.draftRevision } });
    assert.equal(staleePublish.statusCode, 409);
    const v2 = await as(admin, { method: 'POST', url: `/api/proof/collect/forms/${flow.id}`, payload: { draftRevision: saved.json().data.draftRevision } });
    assert.equal(v2.statusCode, 201, v2.body);
    assert.equal(v2.json().data.flowVersion.versionNumber, 2);
    const served = await servedFlow(ctx.dataSource.manager, flow.publicId);
    assert.equal(served.version.definition.title, 'Tell us more');
    const v1 = (await as(member, { method: 'GET', url: `/api/proof/collect/forms/${flow.id}?version=1` })).json().data.version;
    assert.equal(v1.definition.title, 'Customer stories', 'version 1 is immutable');
    assert.equal(v1.contentHash, version.contentHash);
    assert.equal(question.version, 1);
  });

  it('publishing refuses a foreign template, a missing question version and an unrouted band (400)', async () => {
    const other = await createTenant();
    const foreign = await publishTemplate(other);
    const q = await newQuestion(t);
    const created = (await as(t.owner, {
      method: 'POST', url: '/api/proof/collect/forms',
      payload: {
        productId: t.product.id, name: 'Bad',
        definition: {
          consentTemplateVersionId: foreign.id, rating: { scale: 'five_star', required: true }, routing: { negative: 'support_room', neutral: 'check_in' },
          questions: [{ questionId: q.questionId, version: 7, required: false }],
        },
      },
    })).json().data;
    const res = await as(t.owner, { method: 'POST', url: `/api/proof/collect/forms/${created.id}`, payload: { draftRevision: created.draftRevision } });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().code, 'INVALID_INPUT');
    const message: string = res.json().error;
    assert.match(message, /definition\.consentTemplateVersionId/);
    assert.match(message, /definition\.questions\[0\]/);
    assert.match(message, /definition\.routing\.positive/, 'every band must be routed');
    const pause = await as(t.owner, { method: 'PATCH', url: `/api/proof/collect/forms/${created.id}`,
      payload: { draftRevision: created.draftRevision, state: 'paused' } });
    assert.equal(pause.statusCode, 409, 'never published');
  });

  it('pause, resume and archive; archived is final', async () => {
    const { flow } = await liveFlow(t);
    const rev = (await as(t.owner, { method: 'GET', url: `/api/proof/collect/forms/${flow.id}` })).json().data.draftRevision;
    const paused = await as(t.owner, { method: 'PATCH', url: `/api/proof/collect/forms/${flow.id}`, payload: { draftRevision: rev, state: 'paused' } });
    assert.equal(paused.json().data.state, 'paused');
    await assert.rejects(servedFlow(ctx.dataSource.manager, flow.publicId), /not live/);
    const live = await as(t.owner, { method: 'PATCH', url: `/api/proof/collect/forms/${flow.id}`, payload: { draftRevision: rev, state: 'live' } });
    assert.equal(live.json().data.state, 'live');
    const archived = await as(t.owner, { method: 'PATCH', url: `/api/proof/collect/forms/${flow.id}`, payload: { draftRevision: rev, state: 'archived' } });
    assert.equal(archived.json().data.state, 'archived');
    const again = await as(t.owner, { method: 'PATCH', url: `/api/proof/collect/forms/${flow.id}`, payload: { draftRevision: rev, state: 'live' } });
    assert.equal(again.statusCode, 409);
  });

  it('questions: an edit writes a new version, old versions stay; usage counts; archive refuses pin, restore allows it', async () => {
    const q = await newQuestion(t, 'How did onboarding go?');
    const v2 = await as(t.owner, { method: 'PATCH', url: `/api/proof/collect/questions/${q.questionId}`,
      payload: { text: 'How did your onboarding go?', kind: 'long_text' } });
    assert.equal(v2.statusCode, 201, v2.body);
    assert.equal(v2.json().data.version, 2);
    const read = (await as(member, { method: 'GET', url: `/api/proof/collect/questions/${q.questionId}` })).json().data;
    assert.deepEqual(read.versions.map((v: { text: string }) => v.text), ['How did onboarding go?', 'How did your onboarding go?']);
    const pin = await as(t.owner, { method: 'POST', url: `/api/proof/collect/questions/${q.questionId}`, payload: { action: 'pin', version: 1 } });
    assert.equal(pin.json().data.flowQuestion.version, 1);
    assert.equal(pin.json().data.flowQuestion.text, 'How did onboarding go?');

    const template = await publishTemplate(t);
    const flow = (await as(t.owner, {
      method: 'POST', url: '/api/proof/collect/forms',
      payload: { productId: t.product.id, name: 'Pinned', definition: { consentTemplateVersionId: template.id,
        questions: [{ questionId: q.questionId, version: 1, required: true }] } },
    })).json().data;
    await as(t.owner, { method: 'POST', url: `/api/proof/collect/forms/${flow.id}`, payload: { draftRevision: flow.draftRevision } });
    const usage = (await as(member, { method: 'GET', url: '/api/proof/collect/questions' })).json().data.find((x: { id: string }) => x.id === q.questionId)
      .usage;
    assert.deepEqual(usage, { flows: 1, liveFlows: 1 });
    // A third version leaves the published flow on version 1.
    await as(t.owner, { method: 'PATCH', url: `/api/proof/collect/questions/${q.questionId}`, payload: { text: 'Anything else?', kind: 'short_text' } });
    const served = await servedFlow(ctx.dataSource.manager, flow.publicId);
    assert.equal(served.version.definition.questions[0].version, 1);

    const archived = await as(t.owner, { method: 'POST', url: `/api/proof/collect/questions/${q.questionId}`, payload: { action: 'archive' } });
    assert.equal(archived.json().data.state, 'archived');
    const refused = await as(t.owner, { method: 'POST', url: `/api/proof/collect/questions/${q.questionId}`, payload: { action: 'pin' } });
    assert.equal(refused.statusCode, 409);
    await as(t.owner, { method: 'POST', url: `/api/proof/collect/questions/${q.questionId}`, payload: { action: 'restore' } });
    const pinned = await as(t.owner, { method: 'POST', url: `/api/proof/collect/questions/${q.questionId}`, payload: { action: 'pin' } });
    assert.equal(pinned.json().data.flowQuestion.version, 3);
    const badChoice = await as(t.owner, { method: 'POST', url: '/api/proof/collect/questions',
      payload: { text: 'Pick one', kind: 'choice', options: ['only'] } });
    assert.equal(badChoice.statusCode, 400);
  });

  it('questions: PATCH is a partial change; what it leaves out carries over into the new version', async () => {
    const created = await as(t.owner, {
      method: 'POST', url: '/api/proof/collect/questions',
      payload: { text: 'Which plan are you on?', kind: 'choice', helpText: 'Pick one', options: ['Free', 'Team'] },
    });
    const id = created.json().data.questionId;
    const patch = (payload: object) => as(t.owner, { method: 'PATCH', url: route('/api/proof/collect/questions/{id}', { id }), payload });
    const textOnly = await patch({ text: 'Which plan do you use?' });
    assert.equal(textOnly.statusCode, 201, textOnly.body);
    assert.deepEqual(
      (({ version, text, kind, helpText, options }) => ({ version, text, kind, helpText, options }))(textOnly.json().data),
      { version: 2, text: 'Which plan do you use?', kind: 'choice', helpText: 'Pick one', options: ['Free', 'Team'] },
    );
    const noHelp = (await patch({ helpText: null })).json().data;
    assert.equal(noHelp.helpText, null);
    assert.deepEqual(noHelp.options, ['Free', 'Team']);
    // Leaving choice drops the carried options; becoming a choice needs them.
    const yesNo = (await patch({ kind: 'yes_no' })).json().data;
    assert.equal(yesNo.kind, 'yes_no');
    assert.equal(yesNo.options ?? null, null);
    const noOptions = await patch({ kind: 'choice' });
    assert.equal(noOptions.statusCode, 400);
    assert.equal(noOptions.json().code, 'INVALID_INPUT');
    assert.equal((await patch({})).statusCode, 400);
    const versions = (await as(member, { method: 'GET', url: `/api/proof/collect/questions/${id}` })).json().data.versions;
    assert.equal(versions.length, 4, 'a refused PATCH writes no version');
  });
  it('consent templates: each publish is the next immutable version with the hash of its wording; a flow keeps the version it pinned', async () => {
    const v1 = await publishTemplate(t, 'Release B', 'First wording that the customer agrees to.');
    const v2 = await publishTemplate(t, 'Release B', 'Second wording that the customer agrees to.');
    assert.equal(v1.version, 1);
    assert.equal(v2.version, 2);
    assert.equal(v1.templateId, v2.templateId);
    assert.notEqual(v1.wordingHash, v2.wordingHash);
    const rows = await ctx.dataSource.query('SELECT wording FROM consent_template_versions WHERE id = $1', [v1.id]);
    assert.equal(rows[0].wording, 'First wording that the customer agrees to.');
    const short = await as(t.owner, { method: 'POST', url: '/api/proof/collect/consent-templates',
      payload: { productId: t.product.id, name: 'x', wording: 'too short', terms: {} } });
    assert.equal(short.statusCode, 400);
    const listed = await as(t.owner, { method: 'GET', url: `/api/proof/collect/consent-templates?productId=${t.product.id}` });
    assert.equal(listed.statusCode, 200, listed.body);
    const ids = listed.json().data.map((v: { id: string }) => v.id);
    assert.ok(ids.includes(v1.id) && ids.includes(v2.id), listed.body);
  });

  it('roles: members read but never write, a service key gets 403, and another workspace\'s ids are 404', async () => {
    const { flow, question } = await liveFlow(t);
    const writes = [
      { method: 'POST' as const, url: '/api/proof/collect/forms', payload: { productId: t.product.id, name: 'm' } },
      { method: 'POST' as const, url: '/api/proof/collect/consent-templates',
        payload: { productId: t.product.id, name: 'm', wording: 'I agree that my story may be shown anywhere.', terms: {} } },
      { method: 'PATCH' as const, url: `/api/proof/collect/forms/${flow.id}`, payload: { draftRevision: 1, name: 'm' } },
      { method: 'PUT' as const, url: `/api/proof/collect/forms/${flow.id}/incentive`, payload: { offered: false } },
    ];
    for (const w of writes) {
      const res = await as(member, w);
      assert.equal(res.statusCode, 403, `${w.method} ${w.url}`);
      assert.equal(res.json().code, 'FORBIDDEN');
    }
    assert.equal((await as(member, { method: 'GET', url: `/api/proof/collect/forms/${flow.id}` })).statusCode, 200);
    const keyed = await ctx.app.inject(withKey(t.key, { method: 'GET', url: '/api/proof/collect/forms' }));
    assert.equal(keyed.statusCode, 403);
    const other = await createTenant();
    for (const url of [`/api/proof/collect/forms/${flow.id}`, `/api/proof/collect/questions/${question.questionId}`,
      `/api/proof/collect/forms/${flow.id}/qr`]) {
      const res = await as(other.owner, { method: 'GET', url });
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.json().code, 'NOT_FOUND');
    }
    const foreignProduct = await as(other.owner, { method: 'POST', url: '/api/proof/collect/forms', payload: { productId: t.product.id, name: 'steal' } });
    assert.equal(foreignProduct.statusCode, 404);
  });

  it('incentive: set and clear; a rating, band or sentiment condition is refused with the reason; it applies at the next publish', async () => {
    const { flow } = await liveFlow(t);
    const url = `/api/proof/collect/forms/${flow.id}/incentive`;
    const refusals = [
      { offered: true, kind: 'gift_card', description: '$20 card', appliesTo: 'any_response', minRating: 4 },
      { offered: true, kind: 'gift_card', description: '$20 card', appliesTo: 'any_response', sentiment: 'positive' },
      { offered: true, kind: 'gift_card', description: '$20 card for promoters only', appliesTo: 'any_response' },
      { offered: true, kind: 'account_credit', description: 'Credit for a 5-star review', appliesTo: 'submitted_story' },
      { offered: true, kind: 'feature_unlock', description: 'Early access', appliesTo: 'any_response' },
    ];
    for (const body of refusals) {
      const res = await as(t.owner, { method: 'PUT', url, payload: body });
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.equal(res.json().code, 'INVALID_INPUT');
    }
    const sentiment = await as(t.owner, { method: 'PUT', url, payload: refusals[1] });
    assert.match(JSON.stringify(sentiment.json()), /rating, band or sentiment/);
    const set = await as(t.owner, { method: 'PUT', url, payload: { offered: true, kind: 'feature_unlock', description: 'Early access to reports',
      unlockKey: 'reports.beta', appliesTo: 'any_response' } });
    assert.equal(set.statusCode, 200, set.body);
    assert.equal((await servedFlow(ctx.dataSource.manager, flow.publicId)).version.incentive.offered, false, 'not before the next publish');
    const rev = (await as(t.owner, { method: 'GET', url: `/api/proof/collect/forms/${flow.id}` })).json().data.draftRevision;
    await as(t.owner, { method: 'POST', url: `/api/proof/collect/forms/${flow.id}`, payload: { draftRevision: rev } });
    assert.equal((await servedFlow(ctx.dataSource.manager, flow.publicId)).version.incentive.offered, true);
    const cleared = await as(t.owner, { method: 'PUT', url, payload: { offered: false } });
    assert.deepEqual(cleared.json().data.incentive, { offered: false });
  });

  it('domains: DNS records and a pending state; at most five; an IP is 400; another workspace\'s pending claim blocks nothing; DELETE removes it', async () => {
    const { flow } = await liveFlow(t);
    const url = `/api/proof/collect/forms/${flow.id}/domains`;
    const added = await as(t.owner, { method: 'POST', url, payload: { hostname: 'Stories.Example.com' } });
    assert.equal(added.statusCode, 201, added.body);
    const d = added.json().data;
    assert.equal(d.hostname, 'stories.example.com');
    assert.equal(d.status, 'pending_verification');
    assert.deepEqual(d.records.map((r: { type: string }) => r.type), ['CNAME', 'TXT']);
    assert.equal((await as(t.owner, { method: 'POST', url, payload: { hostname: '10.0.0.1' } })).statusCode, 400);
    const other = await createTenant();
    const otherFlow = (await liveFlow(other)).flow;
    // Only a verified claim holds a hostname (test/collection/collection-domains.test.ts): a pending one is no reason to refuse.
    const pending = await as(other.owner, { method: 'POST', url: `/api/proof/collect/forms/${otherFlow.id}/domains`,
      payload: { hostname: 'stories.example.com' } });
    assert.equal(pending.statusCode, 201);
    for (let i = 1; i < 5; i++) assert.equal((await as(t.owner, { method: 'POST', url, payload: { hostname: `s${i}.example.com` } })).statusCode, 201);
    assert.equal((await as(t.owner, { method: 'POST', url, payload: { hostname: 's6.example.com' } })).statusCode, 400);
    assert.equal((await as(member, { method: 'GET', url })).json().data.length, 5);
    assert.equal((await as(t.owner, { method: 'DELETE', url: `${url}?hostname=stories.example.com` })).statusCode, 204);
    assert.equal((await as(t.owner, { method: 'GET', url })).json().data.length, 4);
    assert.equal((await as(other.owner, { method: 'POST', url: `/api/proof/collect/forms/${otherFlow.id}/domains`,
      payload: { hostname: 'stories.example.com' } })).statusCode, 200, 'its own claim, asked again');
  });

  it('QR: a printable SVG that decodes back to the live link; download=1 is an attachment; 409 before publishing', async () => {
    const { flow } = await liveFlow(t);
    const res = await as(member, { method: 'GET', url: `/api/proof/collect/forms/${flow.id}/qr?download=1` });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^image\/svg\+xml/);
    assert.match(String(res.headers['content-disposition']), /^attachment; filename=".*\.svg"$/);
    const liveUrl = `${ctx.config.collectPageUrl}/f/${flow.publicId}`;
    assert.equal(res.headers['x-qr-url'], liveUrl);
    const png = new Resvg(res.body, { fitTo: { mode: 'width', value: 400 }, background: 'white' }).render();
    const decoded = jsQR(new Uint8ClampedArray(png.pixels), png.width, png.height);
    assert.equal(decoded?.data, liveUrl);
    const inline = await as(member, { method: 'GET', url: `/api/proof/collect/forms/${flow.id}/qr` });
    assert.equal(inline.headers['content-disposition'], undefined);
    await as(t.owner, { method: 'POST', url: `/api/proof/collect/forms/${flow.id}/domains`, payload: { hostname: 'qr.example.org' } });
    const custom = await as(member, { method: 'GET', url: `/api/proof/collect/forms/${flow.id}/qr?domain=qr.example.org` });
    assert.equal(custom.headers['x-qr-url'], `https://qr.example.org/f/${flow.publicId}`);
    const draft = (await as(t.owner, { method: 'POST', url: '/api/proof/collect/forms', payload: { productId: t.product.id, name: 'Unpublished' } })).json()
      .data;
    assert.equal((await as(member, { method: 'GET', url: `/api/proof/collect/forms/${draft.id}/qr` })).statusCode, 409);
  });
});

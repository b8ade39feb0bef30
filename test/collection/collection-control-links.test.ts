import assert from 'node:assert/strict';
import { FastifyInstance, InjectOptions } from 'fastify';
import { createServiceKey } from '../../db/platform/service-keys';
import { newId } from '../../db/rules/ids';
import { newSecret, sha256Hex } from '../../db/rules/secrets';
import { call, endUserToken, eventually, withKey, withinOneMinuteWindow } from '../support/fixtures';
import { as } from '../support/collection-setup';
import { CollectionTenant, createCollectionTenant, customerCall, fillDraft, submitDraft } from '../support/collection';
import { ctx } from '../support/root-hooks';
import { route } from '../support/routes';
import { bodyOf } from '../support/smtp-sink';

const CONTROL_LINK = /\/control#(ct_[A-Za-z0-9_-]{43})/;
const address = (tag: string) => `${tag}-${newId('x').slice(2, 12)}@customer.example`;

interface Story { proofItemId: string; originalVersionId: string; controlToken: string }

/**
 * docs/collection.md#story-links-and-person-links: the control link answered to a submission is a story link (its own story only);
 * a person link (all of one person's stories in one product) only ever reaches the person, by e-mail
 * to an address of a story they told or in their signed end user's inbox.
 */
describe('collection: story links and person links', () => {
  let t: CollectionTenant;
  let submissionsKey: string;
  before(async () => {
    t = await createCollectionTenant();
    // The attacker of issue 23: a key that may only start submissions.
    submissionsKey = (await createServiceKey(ctx.dataSource, {
      organizationId: t.organizationId, productId: t.product.id, environment: 'production', scopes: ['service:proof:submissions:write'],
    })).secret;
  });

  const asLink = (token: string, opts: InjectOptions, app?: FastifyInstance) =>
    customerCall({ ...opts, headers: { ...opts.headers, 'x-control-token': token } }, app);
  const storiesOf = async (token: string) => {
    const res = await asLink(token, { method: 'GET', url: '/api/proof/collect/control' });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json().data.stories as Array<{ proofItemId: string }>).map((s) => s.proofItemId).sort();
  };
  const askPersonLink = (token: string, email: string, app?: FastifyInstance) =>
    asLink(token, { method: 'POST', url: '/api/proof/collect/control/person-link', payload: { email } }, app);
  const personLinkCommands = async (itemIds: string[]) => (await ctx.dataSource.query(
    `SELECT command FROM workflow_commands WHERE command->>'type' = 'collection.approval_link.deliver' AND command->>'proofItemId' = ANY($1)`,
    [itemIds])).length;

  /**
   * A story told through a personal request the workspace sent to this person (`email:<address>` names the
   * recipient by address alone), signed with `email`.
   */
  async function requestedStory(
    personRef: string, email: string,
    recipient: Record<string, string> = personRef.startsWith('email:') ? { email: personRef.slice(6), name: 'Vera' } : { personRef, email, name: 'Vera' },
  ): Promise<Story> {
    const made = await as(t.owner, {
      method: 'POST', url: '/api/proof/collect/requests', payload: { flowId: t.flowId, channel: 'link', recipient },
    });
    assert.equal(made.statusCode, 201, made.body);
    assert.equal((await as(t.owner, { method: 'POST', url: `/api/proof/collect/requests/${made.json().data.request.id}`,
      payload: { action: 'send' } })).statusCode, 200);
    const opened = await customerCall({ method: 'POST', url: '/api/proof/collect/drafts', payload: {},
      headers: { 'x-link-token': made.json().data.linkToken } });
    assert.equal(opened.statusCode, 201, opened.body);
    const d = { id: opened.json().data.draft.id, session: opened.json().data.draftSession, body: {} };
    await fillDraft(t, d, { identity: { name: 'Vera Victim', email } });
    const res = await submitDraft(d);
    assert.equal(res.statusCode, 201, res.body);
    return res.json().data;
  }

  /** The attack: a key starts a session naming someone's personRef and submits a trivial draft. */
  async function keyStory(personRef: string, email: string): Promise<Story> {
    const started = await call(withKey(submissionsKey, {
      method: 'POST', url: '/api/v1/proof/submissions/sessions', payload: { flowId: t.publicId, customer: { personRef, email, name: 'Mallory' } },
    }));
    assert.equal(started.statusCode, 201, started.body);
    const d = { id: started.json().data.sessionId, session: started.json().data.draftSession, body: {} };
    await fillDraft(t, d, { text: 'ok', identity: { name: 'Mallory', email } });
    const res = await submitDraft(d);
    assert.equal(res.statusCode, 201, res.body);
    return res.json().data;
  }

  /** A story told by a signed end user (JWT session), whose person is `end_user:<sub>`. */
  async function endUserStory(sub: string): Promise<Story> {
    const started = await customerCall({
      method: 'POST', url: '/api/proof/collect/sessions', payload: { flowId: t.publicId, surface: 'in_app' },
      headers: { authorization: `Bearer ${endUserToken(t.product, { sub })}` },
    });
    assert.equal(started.statusCode, 201, started.body);
    const d = { id: started.json().data.draft.id, session: started.json().data.draftSession, body: {} };
    await fillDraft(t, d);
    const res = await submitDraft(d);
    assert.equal(res.statusCode, 201, res.body);
    return res.json().data;
  }

  async function mailedLink(to: string): Promise<string> {
    const [mail] = await eventually(async () => (ctx.smtpSink.to(to).length ? ctx.smtpSink.to(to) : undefined));
    assert.doesNotMatch(mail.subject, /ct_/);
    const token = CONTROL_LINK.exec(bodyOf(mail.raw))?.[1];
    assert.ok(token, 'the e-mail carries a control link');
    return token;
  }

  it('a key-started session\'s link is a story link: the person\'s other stories are 404 to it, and GET lists only its own', async () => {
    const personRef = `cus-${newId('p')}`;
    const victim = await requestedStory(personRef, address('victim'));
    const own = await keyStory(personRef, address('mallory'));
    const edited = await call(withKey(t.key, {
      method: 'POST', url: `/api/v1/proof/items/${victim.proofItemId}/versions`,
      payload: { content: { text: 'Unapproved new words.', title: 'Draft' }, changeReason: 'tightened' },
    }));
    assert.equal(edited.statusCode, 201, edited.body);
    const version = edited.json().data;

    const view = await asLink(own.controlToken, { method: 'GET', url: '/api/proof/collect/control' });
    assert.equal(view.statusCode, 200, view.body);
    assert.deepEqual(view.json().data.stories.map((s: { proofItemId: string }) => s.proofItemId), [own.proofItemId]);
    assert.doesNotMatch(view.body, /Vera|victim-|Unapproved new words/, 'nothing of the other story: not its words, name or address');
    const review = await asLink(own.controlToken, { method: 'GET', url: '/api/proof/review' });
    assert.deepEqual(review.json().data, { versions: [], assets: [] });

    for (const opts of [
      { method: 'POST', url: '/api/proof/collect/control', payload: { action: 'withdraw', proofItemId: victim.proofItemId, confirm: true } },
      { method: 'POST', url: '/api/proof/collect/control', payload: { action: 'approve_wording', proofItemId: victim.proofItemId, versionId: version.id,
        contentHash: version.contentHash } },
      { method: 'POST', url: '/api/proof/collect/control', payload: { action: 'pause', proofItemId: victim.proofItemId } },
      { method: 'GET', url: `/api/proof/collect/control/passport?proofItemId=${victim.proofItemId}` },
      { method: 'POST', url: '/api/proof/collect/control/passport', payload: { action: 'limit_channels', proofItemId: victim.proofItemId,
        channels: ['website'] } },
      { method: 'GET', url: `/api/proof/collect/control/receipt?proofItemId=${victim.proofItemId}` },
      { method: 'POST', url: '/api/proof/review', payload: { kind: 'version', id: version.id, decision: 'approve', contentHash: version.contentHash } },
    ] as InjectOptions[]) {
      const res = await asLink(own.controlToken, opts);
      assert.equal(res.statusCode, 404, `${opts.method} ${opts.url}: ${res.body}`);
      assert.equal(res.json().code, 'NOT_FOUND');
    }
    const [item] = await ctx.dataSource.query(`SELECT status, customer_paused_at FROM proof_items WHERE id = $1`, [victim.proofItemId]);
    assert.deepEqual(item, { status: 'submitted', customer_paused_at: null });
    // Its own story it still controls, as the customer.
    const passport = await asLink(own.controlToken, { method: 'GET', url: `/api/proof/collect/control/passport?proofItemId=${own.proofItemId}` });
    assert.equal(passport.statusCode, 200, passport.body);
    const [secret] = await ctx.dataSource.query(`SELECT scope, proof_item_id FROM collection_secrets WHERE digest = $1`, [sha256Hex(own.controlToken)]);
    assert.deepEqual(secret, { scope: 'story', proof_item_id: own.proofItemId });
  });

  it('a person link reaches every story of the person, and only by e-mail to an address of a story they told; any other address gets 202 and nothing',
    async () => {
      const to = address('vera');
      const personRef = `email:${to}`;
      const first = await requestedStory(personRef, to);
      const second = await requestedStory(personRef, to);
      const injected = await keyStory(personRef, address('mallory'));
      const teammateAddress = address('teammate');
      const teammateMade = await requestedStory(personRef, teammateAddress, { personRef, email: teammateAddress, name: 'Mallory' });
      const all = [first.proofItemId, second.proofItemId, injected.proofItemId, teammateMade.proofItemId].sort();
      assert.deepEqual(await storiesOf(first.controlToken), [first.proofItemId]);

      // The key's own address, and an address nobody gave: 202, and no delivery is even queued.
      const keyGiven = await askPersonLink(injected.controlToken, (await ctx.dataSource.query(
      `SELECT customer_email FROM proof_items WHERE id = $1`, [injected.proofItemId]))[0].customer_email);
      assert.equal(keyGiven.statusCode, 202, keyGiven.body);
      const stranger = address('stranger');
      const wrong = await askPersonLink(first.controlToken, stranger);
      assert.equal(wrong.statusCode, 202, wrong.body);
      assert.deepEqual(wrong.json(), keyGiven.json(), 'the answer tells nothing about the address');
      assert.equal(await personLinkCommands(all), 0);
      // A personal request's recipient is the workspace's word: a teammate who names the person and signs the
      // story with their own address gets no person link at that address.
      assert.equal((await askPersonLink(teammateMade.controlToken, teammateAddress)).statusCode, 202);
      assert.equal(await personLinkCommands(all), 0);

      // The person's own address (any case), asked for with the key's story link: the mail goes to the person.
      const asked = await askPersonLink(injected.controlToken, to.toUpperCase());
      assert.equal(asked.statusCode, 202, asked.body);
      assert.deepEqual(asked.json(), wrong.json());
      assert.ok(!asked.body.includes('ct_'));
      const personLink = await mailedLink(to);
      assert.deepEqual(await storiesOf(personLink), all);
      const passport = await asLink(personLink, { method: 'GET', url: `/api/proof/collect/control/passport?proofItemId=${second.proofItemId}` });
      assert.equal(passport.statusCode, 200, passport.body);
      const [row] = await ctx.dataSource.query(`SELECT * FROM collection_secrets WHERE digest = $1`, [sha256Hex(personLink)]);
      assert.equal(row.scope, 'person');
      assert.equal(row.proof_item_id, null);
      assert.ok(!JSON.stringify(row).includes(personLink), 'stored only as its SHA-256');
      assert.equal(await personLinkCommands(all), 1);
      assert.equal(ctx.smtpSink.to(stranger).length, 0);
      assert.ok(ctx.smtpSink.messages.every((m) => !m.to.some((r) => r.startsWith('mallory-'))), 'nothing ever went to the key\'s address');
      assert.equal(ctx.smtpSink.to(teammateAddress).length, 0, 'nothing went to the address a teammate gave');

      // An action with the person link is the customer's.
      const paused = await asLink(personLink, { method: 'POST', url: '/api/proof/collect/control',
        payload: { action: 'pause', proofItemId: second.proofItemId } });
      assert.equal(paused.statusCode, 200, paused.body);
      const [event] = await ctx.dataSource.query(
      `SELECT actor_type FROM proof_events WHERE proof_item_id = $1 AND event_type = 'proof.item.paused_by_customer'`, [second.proofItemId]);
      assert.equal(event.actor_type, 'customer');
    });

  it('person-link requests are rate limited per person, across all of their links', async () => {
    const app = await ctx.buildApp({ personLinkPerMinute: 2 });
    const personRef = `cus-${newId('p')}`;
    const a = await requestedStory(personRef, address('rate'));
    const b = await requestedStory(personRef, address('rate'));
    const email = address('nobody');
    await withinOneMinuteWindow();
    assert.equal((await askPersonLink(a.controlToken, email, app)).statusCode, 202);
    assert.equal((await askPersonLink(b.controlToken, email, app)).statusCode, 202);
    const limited = await askPersonLink(a.controlToken, email, app);
    assert.equal(limited.statusCode, 429, limited.body);
    assert.equal(limited.json().code, 'RATE_LIMITED');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal((await askPersonLink(b.controlToken, email, app)).statusCode, 429, 'the other link of the same person too');
    const other = await requestedStory(`cus-${newId('p')}`, address('rate'));
    assert.equal((await askPersonLink(other.controlToken, email, app)).statusCode, 202, 'another person has a window of their own');
  });

  it('approval-link answers no secret: none only queues the wording; email and in_app deliver a person link to the person', async () => {
    const url = (id: string) => route('/api/proof/collect/items/{id}/approval-link', { id });
    const to = address('approve');
    const personRef = `email:${to}`;
    const story = await requestedStory(personRef, to);
    const other = await requestedStory(personRef, to);
    const version = (await call(withKey(t.key, {
      method: 'POST', url: `/api/v1/proof/items/${story.proofItemId}/versions`, payload: { content: { text: 'Nine days to two.' }, changeReason: 'shorter' },
    }))).json().data;

    const none = await as(t.owner, { method: 'POST', url: url(story.proofItemId), payload: { versionId: version.id, deliver: 'none' } });
    assert.equal(none.statusCode, 201, none.body);
    assert.deepEqual(none.json().data, { delivered: 'none', expiresAt: null });
    const pending = (await asLink(story.controlToken, { method: 'GET', url: '/api/proof/collect/control' })).json().data.stories[0].pendingApprovals;
    assert.deepEqual(pending.map((p: { versionId: string }) => p.versionId), [version.id], 'the customer sees it on the link they hold');

    const mailed = await as(t.owner, { method: 'POST', url: url(story.proofItemId), payload: { versionId: version.id, deliver: 'email' } });
    assert.equal(mailed.statusCode, 201, mailed.body);
    assert.deepEqual(Object.keys(mailed.json().data).sort(), ['delivered', 'expiresAt']);
    assert.equal(mailed.json().data.delivered, 'email');
    assert.doesNotMatch(mailed.body, /ct_/);
    const personLink = await mailedLink(to);
    assert.deepEqual(await storiesOf(personLink), [story.proofItemId, other.proofItemId].sort());
    const [row] = await ctx.dataSource.query(`SELECT scope, expires_at FROM collection_secrets WHERE digest = $1`, [sha256Hex(personLink)]);
    assert.equal(row.scope, 'person');
    assert.equal(row.expires_at.toISOString(), mailed.json().data.expiresAt);

    // in_app: the signed end user whose stories they are finds it in their inbox and redeems it there.
    const sub = `user-${newId('u').slice(2, 12)}`;
    const mine = await endUserStory(sub);
    const also = await endUserStory(sub);
    const noInbox = await as(t.owner, { method: 'POST', url: url(story.proofItemId), payload: { deliver: 'in_app' } });
    assert.equal(noInbox.statusCode, 409, 'a person no signed end user told a story for has no inbox');
    const inApp = await as(t.owner, { method: 'POST', url: url(mine.proofItemId), payload: { deliver: 'in_app' } });
    assert.equal(inApp.statusCode, 201, inApp.body);
    assert.deepEqual(Object.keys(inApp.json().data).sort(), ['delivered', 'expiresAt']);
    assert.doesNotMatch(inApp.body, /ct_/);
    const asUser = (opts: InjectOptions, who = sub) => call({ ...opts, headers: { authorization: `Bearer ${endUserToken(t.product, { sub: who })}` } });
    const item = await eventually(async () => {
      const page = await asUser({ method: 'GET', url: '/api/v1/inbox' });
      return (page.json().data.items as Array<{ id: string; controlLinkExpiresAt: string | null }>).find((i) => i.controlLinkExpiresAt);
    });
    assert.equal(item.controlLinkExpiresAt, inApp.json().data.expiresAt);
    const [stored] = await ctx.dataSource.query(`SELECT * FROM inbox_items WHERE id = $1`, [item.id]);
    assert.doesNotMatch(JSON.stringify(stored), /ct_[A-Za-z0-9_-]{43}/, 'the inbox holds no secret');
    const byKey = await call(withKey(t.key, { method: 'POST', url: `/api/v1/inbox/${item.id}/control-link` }));
    assert.equal(byKey.statusCode, 403, 'a key never redeems it');
    const byOther = await asUser({ method: 'POST', url: `/api/v1/inbox/${item.id}/control-link` }, `${sub}-other`);
    assert.equal(byOther.statusCode, 404, 'another end user never redeems it');
    const redeemed = await asUser({ method: 'POST', url: `/api/v1/inbox/${item.id}/control-link` });
    assert.equal(redeemed.statusCode, 201, redeemed.body);
    assert.equal(redeemed.json().data.controlExpiresAt, inApp.json().data.expiresAt);
    assert.deepEqual(await storiesOf(redeemed.json().data.controlToken), [mine.proofItemId, also.proofItemId].sort());
  });

  it('a control link issued before story links keeps the person-wide reach it was issued with', async () => {
    const personRef = `cus-${newId('p')}`;
    const first = await requestedStory(personRef, address('old'));
    const second = await requestedStory(personRef, address('old'));
    // As every control secret stood before the migration: person-wide, no story; the migration marks it `person`.
    const old = newSecret('ct');
    await ctx.dataSource.query(
      `INSERT INTO collection_secrets (digest, kind, organization_id, product_id, person_ref, scope, expires_at)
       VALUES ($1, 'control', $2, $3, $4, 'person', now() + interval '1 day')`, [sha256Hex(old), t.organizationId, t.product.id, personRef]);
    assert.deepEqual(await storiesOf(old), [first.proofItemId, second.proofItemId].sort());
    const receipt = await asLink(old, { method: 'GET', url: `/api/proof/collect/control/receipt?proofItemId=${second.proofItemId}` });
    assert.equal(receipt.statusCode, 200, receipt.body);
    await assert.rejects(ctx.dataSource.query(
      `INSERT INTO collection_secrets (digest, kind, organization_id, product_id, person_ref) VALUES ($1, 'control', $2, $3, $4)`,
      [sha256Hex(newSecret('ct')), t.organizationId, t.product.id, personRef]), /collection_secrets_control_scope_check/,
    'no control secret without its scope');
  });
});

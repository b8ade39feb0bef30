import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { AddressInfo } from 'node:net';
import { FastifyInstance } from 'fastify';
import { principalIdOf } from '../../db/rules/room-rules';
import { LOOP_SCOPES, eventually, keyFor, postSignal, teammate } from '../support/customer-loop';
import { Tenant, call, createTenant, endUserToken, errorCode, withKey, withinOneMinuteWindow } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { SseClient } from '../support/sse';

describe('customer loop: inbox and live stream', () => {
  let tenant: Tenant;
  let inboxKey: string;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const reply = (threadId: string, body: string, app?: FastifyInstance) =>
    call(teammate(tenant.owner, 'POST', `/api/workspace/threads/${threadId}/messages`, { body, visibility: 'customer' }), app);

  before(async () => {
    tenant = await createTenant(LOOP_SCOPES);
    inboxKey = await keyFor(tenant, ['service:inbox:read']);
  });

  it('pages newest first with before, unread count; a key needs endUserId, a token is its own end user', async () => {
    const { threadId } = await postSignal(tenant, { endUserId: 'pager' });
    for (const n of [1, 2, 3]) await reply(threadId, `update ${n}`);
    const first = await call(withKey(inboxKey, { method: 'GET', url: '/api/v1/inbox?endUserId=pager&limit=2' }));
    assert.equal(first.statusCode, 200, first.body);
    const page = first.json().data;
    assert.equal(page.unread, 3);
    assert.deepEqual(page.items.map((i: { preview: string }) => i.preview), ['update 3', 'update 2']);
    assert.deepEqual(Object.keys(page.items[0]).sort(), ['controlLinkExpiresAt', 'createdAt', 'id', 'preview', 'readAt', 'releaseId', 'roomId', 'subject',
      'threadId']);
    assert.equal(page.items[0].controlLinkExpiresAt, null, 'a thread reply delivers no control link');
    const rest = (await call(withKey(inboxKey, { method: 'GET', url: `/api/v1/inbox?endUserId=pager&limit=2&before=${page.nextCursor}` }))).json().data;
    assert.deepEqual(rest.items.map((i: { preview: string }) => i.preview), ['update 1']);
    assert.equal(rest.nextCursor, null);
    const missing = await call(withKey(inboxKey, { method: 'GET', url: '/api/v1/inbox' }));
    assert.equal(errorCode(missing), 'VALIDATION_FAILED');
    for (const q of ['limit=0', 'limit=101', 'before=garbage!']) {
      assert.equal((await call(withKey(inboxKey, { method: 'GET', url: `/api/v1/inbox?endUserId=pager&${q}` }))).statusCode, 400, q);
    }
    const mine = await call({ method: 'GET', url: '/api/v1/inbox', headers: bearer(endUserToken(tenant.product, { sub: 'pager' })) });
    assert.equal(mine.json().data.items.length, 3);
    const spying = await call({ method: 'GET', url: '/api/v1/inbox?endUserId=someone-else', headers: bearer(endUserToken(tenant.product, { sub: 'pager' })) });
    assert.equal(spying.statusCode, 400);
    assert.equal(errorCode(await call(withKey(tenant.key, { method: 'GET', url: '/api/v1/inbox?endUserId=pager' }))), 'INSUFFICIENT_SCOPE');
  });

  it('marks given ids or everything read (identity only, at most 200 ids); a token acts once', async () => {
    const { threadId } = await postSignal(tenant, { endUserId: 'reader' });
    for (const n of [1, 2, 3]) await reply(threadId, `news ${n}`);
    const items = (await call(withKey(inboxKey, { method: 'GET', url: '/api/v1/inbox?endUserId=reader' }))).json().data.items;
    const token = endUserToken(tenant.product, { sub: 'reader' });
    const some = await call({ method: 'POST', url: '/api/v1/inbox/read', headers: bearer(token), payload: { ids: [items[0].id, 'inb_unknown0000000'] } });
    assert.equal(some.statusCode, 200, some.body);
    assert.deepEqual(some.json().data, { unread: 2, marked: 1 });
    const reused = await call({ method: 'POST', url: '/api/v1/inbox/read', headers: bearer(token), payload: {} });
    assert.equal(reused.statusCode, 401, 'the nonce was consumed');
    const all = await call({ method: 'POST', url: '/api/v1/inbox/read', headers: bearer(endUserToken(tenant.product, { sub: 'reader' })) });
    assert.deepEqual(all.json().data, { unread: 0, marked: 2 });
    const tooMany = await call({
      method: 'POST', url: '/api/v1/inbox/read', headers: bearer(endUserToken(tenant.product, { sub: 'reader' })),
      payload: { ids: Array.from({ length: 201 }, (_, i) => `inb_${String(i).padStart(12, '0')}`) },
    });
    assert.equal(tooMany.statusCode, 400);
    const keyed = await call(withKey(inboxKey, { method: 'POST', url: '/api/v1/inbox/read', payload: {} }));
    assert.equal(keyed.statusCode, 403);
    const otherUser = await call({ method: 'POST', url: '/api/v1/inbox/read', headers: bearer(endUserToken(tenant.product, { sub: 'someone' })),
      payload: { ids: [items[1].id] } });
    assert.deepEqual(otherUser.json().data, { unread: 0, marked: 0 }, 'another end user\'s items are untouched');
  });

  describe('stream across two API instances', () => {
    let a: FastifyInstance;
    let b: FastifyInstance;
    let baseB: string;
    const clients: SseClient[] = [];
    const open = async (sub: string, headers: Record<string, string> = {}) => {
      const client = await SseClient.open(`${baseB}/api/v1/inbox/stream`, { ...bearer(endUserToken(tenant.product, { sub })), ...headers });
      clients.push(client);
      return client;
    };

    before(async () => {
      a = await ctx.buildApp();
      b = await ctx.buildApp({ inboxHeartbeatMs: 200 });
      await a.listen({ port: 0, host: '127.0.0.1' });
      await b.listen({ port: 0, host: '127.0.0.1' });
      baseB = `http://127.0.0.1:${(b.server.address() as AddressInfo).port}`;
    });

    after(() => {
      for (const client of clients) client.close();
    });

    it('an item committed through one instance reaches a stream held by the other, with unread and heartbeats', async () => {
      const { threadId } = await postSignal(tenant, { endUserId: 'streamer' }, a);
      const stream = await open('streamer');
      assert.equal(stream.status, 200);
      assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
      const [ready] = await stream.waitFor('ready');
      assert.deepEqual(ready.data, { endUserId: 'streamer', unread: 0 });
      assert.equal((await reply(threadId, 'Pushed live', a)).statusCode, 201);
      const [item] = await stream.waitFor('item');
      assert.equal((item.data as { preview: string }).preview, 'Pushed live');
      assert.ok(item.id);
      const [unread] = await stream.waitFor('unread');
      assert.deepEqual(unread.data, { unread: 1 });
      assert.ok(await eventually(async () => stream.comments >= 1), 'heartbeats keep the connection alive');
      await call(teammate(tenant.owner, 'POST', `/api/workspace/threads/${threadId}/messages`, { body: 'internal', visibility: 'internal' }), a);
      const other = await postSignal(tenant, { endUserId: 'someone-else' }, a);
      await reply(other.threadId, 'not for streamer', a);
      await call({ method: 'POST', url: '/api/v1/inbox/read', headers: bearer(endUserToken(tenant.product, { sub: 'streamer' })) }, a);
      const unreads = await stream.waitFor('unread', 2);
      assert.deepEqual(unreads[1].data, { unread: 0 });
      assert.equal(stream.events.filter((e) => e.event === 'item').length, 1, 'only the end user\'s own items, never notes');
    });

    it('resumes from Last-Event-ID with the items missed while away', async () => {
      const { threadId } = await postSignal(tenant, { endUserId: 'resumer' }, a);
      const first = await open('resumer');
      await first.waitFor('ready');
      await reply(threadId, 'one', a);
      const [seen] = await first.waitFor('item');
      first.close();
      await reply(threadId, 'two', a);
      await reply(threadId, 'three', a);
      const again = await open('resumer', { 'last-event-id': seen.id! });
      const items = await again.waitFor('item', 2);
      assert.deepEqual(items.map((i) => (i.data as { preview: string }).preview), ['two', 'three']);
      const [ready] = again.events.filter((e) => e.event === 'ready');
      assert.deepEqual(ready.data, { endUserId: 'resumer', unread: 3 });
    });

    it('ends when the token expires, so the client comes back with a fresh one', async () => {
      const exp = Math.floor(Date.now() / 1000) + 2;
      const stream = await SseClient.open(`${baseB}/api/v1/inbox/stream`, bearer(endUserToken(tenant.product, { sub: 'expiring', exp })));
      clients.push(stream);
      await stream.waitFor('ready');
      await assert.rejects(stream.waitFor('item', 1, 4_000), /expected 1 item/);
      assert.equal(stream.closedByServer, true);
    });

    it('is identity only: a key answers 403, no credential 401', async () => {
      const keyed = await call(withKey(inboxKey, { method: 'GET', url: '/api/v1/inbox/stream' }), b);
      assert.equal(keyed.statusCode, 403);
      assert.equal((await call({ method: 'GET', url: '/api/v1/inbox/stream' }, b)).statusCode, 401);
    });

    it('closing the app ends its open streams cleanly', async () => {
      const c = await ctx.buildApp();
      await c.listen({ port: 0, host: '127.0.0.1' });
      const url = `http://127.0.0.1:${(c.server.address() as AddressInfo).port}/api/v1/inbox/stream`;
      const stream = await SseClient.open(url, bearer(endUserToken(tenant.product, { sub: 'closer' })));
      await stream.waitFor('ready');
      await c.close();
      await assert.rejects(stream.waitFor('item', 1, 3_000), /expected 1 item/);
      assert.equal(stream.closedByServer, true);
    });
  });

  describe('stream caps and the end user\'s rate window', () => {
    const clients: SseClient[] = [];
    const baseOf = (app: FastifyInstance) => `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const open = async (app: FastifyInstance, sub: string) => {
      const client = await SseClient.open(`${baseOf(app)}/api/v1/inbox/stream`, bearer(endUserToken(tenant.product, { sub })));
      clients.push(client);
      return client;
    };
    const refusal = (client: SseClient) => JSON.parse(client.body).error;
    const listening = async (overrides: Parameters<typeof ctx.buildApp>[0] = {}) => {
      const app = await ctx.buildApp(overrides);
      await app.listen({ port: 0, host: '127.0.0.1' });
      return app;
    };

    after(() => {
      for (const client of clients) client.close();
    });

    it('an end user holds at most 5 streams at once across API processes: the sixth is 429 with retry-after; a closed one frees its slot', async () => {
      const [a, b] = [await listening(), await listening()];
      const sub = `many-tabs-${randomBytes(4).toString('hex')}`;
      const held: SseClient[] = [];
      for (const app of [a, a, a, b, b]) {
        const stream = await open(app, sub);
        assert.equal(stream.status, 200);
        await stream.waitFor('ready');
        held.push(stream);
      }
      for (const app of [a, b]) {
        const sixth = await open(app, sub);
        assert.equal(sixth.status, 429, 'the sixth stream is refused, whichever process it reaches');
        assert.deepEqual([refusal(sixth).code, refusal(sixth).details], ['RATE_LIMITED', { reason: 'inbox_streams_per_end_user', limit: 5 }]);
        const retryAfter = Number(sixth.headers['retry-after']);
        assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${sixth.headers['retry-after']}`);
      }
      const someoneElse = await open(b, `one-tab-${randomBytes(4).toString('hex')}`);
      assert.equal(someoneElse.status, 200, 'another end user has slots of its own');

      held[3].close();
      const reopened = await eventually(async () => {
        const stream = await open(a, sub);
        if (stream.status === 200) return stream;
        stream.close();
        return null;
      });
      await reopened.waitFor('ready');
      assert.equal((await open(b, sub)).status, 429, 'the freed slot was taken again');
      await a.close();
      const leases = await ctx.dataSource.query('SELECT count(*)::int AS n FROM inbox_stream_leases WHERE end_user_id = $1', [sub]);
      assert.equal(leases[0].n, 1, 'a closing process lets go of its streams\' slots; the other still holds one');
      await b.close();
    });

    it('one process holds at most SV_INBOX_STREAMS_PER_PROCESS streams: past it 503 with retry-after', async () => {
      const app = await listening({ inboxStreamsPerProcess: 2 });
      const first = await open(app, `p1-${randomBytes(4).toString('hex')}`);
      await open(app, `p2-${randomBytes(4).toString('hex')}`);
      const third = await open(app, `p3-${randomBytes(4).toString('hex')}`);
      assert.equal(third.status, 503);
      assert.deepEqual([refusal(third).code, refusal(third).details], ['SERVICE_UNAVAILABLE', { reason: 'inbox_streams_per_process', limit: 2 }]);
      assert.ok(Number(third.headers['retry-after']) >= 1);
      first.close();
      const later = await eventually(async () => {
        const stream = await open(app, `p3-${randomBytes(4).toString('hex')}`);
        if (stream.status === 200) return stream;
        stream.close();
        return null;
      });
      await later.waitFor('ready');
      await app.close();
    });

    it('inbox reads (the page and stream opens) use up the end user\'s window; the refusal counts nothing', async () => {
      const LIMIT = 3;
      const app = await listening({ rateLimitPerMinute: LIMIT });
      // Keep the burst inside one minute window.
      await withinOneMinuteWindow();
      const sub = `poller-${randomBytes(4).toString('hex')}`;
      const page = () => call({ method: 'GET', url: '/api/v1/inbox', headers: bearer(endUserToken(tenant.product, { sub })) }, app);
      const remaining: string[] = [];
      for (const res of [await page(), await page()]) {
        assert.equal(res.statusCode, 200, res.body);
        remaining.push(String(res.headers['x-ratelimit-remaining']));
      }
      const stream = await open(app, sub);
      assert.equal(stream.status, 200);
      remaining.push(String(stream.headers['x-ratelimit-remaining']));
      assert.deepEqual(remaining, ['2', '1', '0'], 'one window across the inbox reads');
      const limited = await page();
      assert.equal(limited.statusCode, 429);
      assert.equal(errorCode(limited), 'RATE_LIMITED');
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      const refusedStream = await open(app, sub);
      assert.equal(refusedStream.status, 429);
      assert.equal(refusal(refusedStream).code, 'RATE_LIMITED');
      const window: Array<{ n: number }> = await ctx.dataSource.query(
        `SELECT coalesce(sum(count), 0)::int AS n FROM rate_limit_windows
          WHERE (key_id = $1 OR key_id LIKE $1 || '#%') AND window_start = date_trunc('minute', now())`,
        [principalIdOf(tenant.product.id, 'end_user', sub)]);
      assert.equal(window[0].n, LIMIT, 'counted in the end user\'s own window rows');
      const keyed = await call(withKey(await keyFor(tenant, ['service:inbox:read']), { method: 'GET', url: `/api/v1/inbox?endUserId=${sub}` }), app);
      assert.equal(keyed.statusCode, 200, 'a key reading the inbox counts in its own window');
      stream.close();
      await app.close();
    });
  });

  it('merges anonymous history onto the signed end user within one product', async () => {
    const t = await createTenant(LOOP_SCOPES);
    const anon = `anon_${'x'.repeat(20)}`;
    const { threadId } = await postSignal(t, { endUserId: anon });
    // The browser that held the anonymous identity kept its proof; the merge carries it.
    const proof = (await call({ method: 'GET', url: '/api/v1/identity/anonymous-proof', headers: bearer(endUserToken(t.product, { sub: anon })) })).json()
      .data.anonymousProof;
    const token = endUserToken(t.product, { sub: 'signed-user' });
    const res = await call({ method: 'POST', url: '/api/v1/identity/merge', headers: bearer(token), payload: { anonymousId: anon, anonymousProof: proof } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.moved.threads, 1);
    const threads = (await call(withKey(t.key, { method: 'GET', url: '/api/v1/threads?endUserId=signed-user' }))).json().data;
    assert.deepEqual(threads.map((x: { id: string }) => x.id), [threadId]);
    const again = await call({ method: 'POST', url: '/api/v1/identity/merge', headers: bearer(endUserToken(t.product, { sub: 'signed-user' })),
      payload: { anonymousId: anon, anonymousProof: proof } });
    assert.equal(again.statusCode, 404, 'nothing left to merge');
    const other = await createTenant(LOOP_SCOPES);
    const otherAnon = `anon_${'y'.repeat(20)}`;
    await postSignal(other, { endUserId: otherAnon });
    const otherProof = (await call({ method: 'GET', url: '/api/v1/identity/anonymous-proof',
      headers: bearer(endUserToken(other.product, { sub: otherAnon })) })).json().data.anonymousProof;
    const cross = await call({ method: 'POST', url: '/api/v1/identity/merge', headers: bearer(endUserToken(t.product, { sub: 'signed-user' })),
      payload: { anonymousId: otherAnon, anonymousProof: otherProof } });
    assert.equal(cross.statusCode, 403, 'another product\'s end user is out of reach: its proof is bound to its product');
    const sameIdHere = (await call({ method: 'GET', url: '/api/v1/identity/anonymous-proof',
      headers: bearer(endUserToken(t.product, { sub: otherAnon })) })).json().data.anonymousProof;
    const crossWithProof = await call({ method: 'POST', url: '/api/v1/identity/merge', headers: bearer(endUserToken(t.product, { sub: 'signed-user' })),
      payload: { anonymousId: otherAnon, anonymousProof: sameIdHere } });
    assert.equal(crossWithProof.statusCode, 404, 'another product\'s end user is out of reach');
    const notAnon = await call({ method: 'POST', url: '/api/v1/identity/merge', headers: bearer(endUserToken(t.product, { sub: 'signed-user' })),
      payload: { anonymousId: 'user-1' } });
    assert.equal(notAnon.statusCode, 400);
  });
});

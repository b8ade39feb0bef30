import assert from 'node:assert/strict';
import { InjectOptions } from 'fastify';
import { call } from '../support/fixtures';

type Envelope = { error?: { code?: string; message?: string; requestId?: string } };

describe('public routes answer malformed requests in the error envelope', () => {
  const cases: Array<[string, InjectOptions]> = [
    ['events: no body, no content type', { method: 'POST', url: '/api/public/proof/events' }],
    ['events: empty text/plain', { method: 'POST', url: '/api/public/proof/events', headers: { 'content-type': 'text/plain' }, payload: '' }],
    ['events: text/plain null', { method: 'POST', url: '/api/public/proof/events', headers: { 'content-type': 'text/plain' }, payload: 'null' }],
    ['events: text/plain array', { method: 'POST', url: '/api/public/proof/events', headers: { 'content-type': 'text/plain' }, payload: '[1,2]' }],
    ['events: text/plain prototype poisoning', { method: 'POST', url: '/api/public/proof/events', headers: { 'content-type': 'text/plain' },
      payload: '{"__proto__":{"x":1},"token":"a","type":"view"}' }],
    ['events: text/plain NUL', { method: 'POST', url: '/api/public/proof/events', headers: { 'content-type': 'text/plain' },
      payload: '{"token":"a\\u0000","type":"view"}' }],
    ['events: application/json empty', { method: 'POST', url: '/api/public/proof/events', headers: { 'content-type': 'application/json' }, payload: '' }],
    ['events: form body', { method: 'POST', url: '/api/public/proof/events', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'token=a' }],
    ['events: octet-stream', { method: 'POST', url: '/api/public/proof/events', headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.from([0, 1, 2]) }],
    ['verify: no body', { method: 'POST', url: '/api/public/proof/receipts/verify' }],
    ['verify: text/plain', { method: 'POST', url: '/api/public/proof/receipts/verify', headers: { 'content-type': 'text/plain' }, payload: 'x' }],
    ['verify: null', { method: 'POST', url: '/api/public/proof/receipts/verify', headers: { 'content-type': 'application/json' }, payload: 'null' }],
    ['receipt: odd id', { method: 'GET', url: '/api/public/proof/receipts/%E2%82' }],
    ['render: odd id', { method: 'GET', url: '/api/public/proof/render/%20%20' }],
    ['media: unknown', { method: 'GET', url: '/api/public/proof/media/x/y' }],
    ['render: unknown query', { method: 'GET', url: '/api/public/proof/render/plc_x?locale[]=a&locale[]=b' }],
  ];
  for (const [name, opts] of cases) {
    it(`${name}: a 4xx with {error:{code,message,requestId}}`, async () => {
      const res = await call(opts);
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${res.statusCode} ${res.body}`);
      const body = res.json<Envelope>();
      assert.equal(typeof body.error?.code, 'string', res.body);
      assert.equal(typeof body.error?.message, 'string');
      assert.equal(body.error?.requestId, res.headers['x-request-id']);
    });
  }
});

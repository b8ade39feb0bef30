import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { buildApp } from '../../api/app';
import { ctx } from '../support/root-hooks';

/** A stream the app's logger writes to, and the lines it received. */
function logSink(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter((l) => l !== ''));
      done();
    },
  });
  return { lines, stream };
}

describe('request log', () => {
  it('at info, secret path tokens (hooks, payment connector, stream source) and query values are masked; the route stays readable', async () => {
    const { lines, stream } = logSink();
    const app = await buildApp({ dataSource: ctx.dataSource, temporal: ctx.temporal, config: ctx.config, logger: { level: 'info', stream } });
    await app.ready();
    const secrets: string[] = [];
    const secret = () => {
      const s = `tok${randomBytes(32).toString('base64url').replace(/[-_]/g, 'x')}`;
      secrets.push(s);
      return s;
    };
    const asked: Array<[string, string, string | null]> = [
      ['POST', `/api/public/proof/hooks/${secret()}`, '/api/public/proof/hooks/[redacted]'],
      ['POST', `/api/public/proof/stripe/${secret()}`, '/api/public/proof/stripe/[redacted]'],
      ['GET', `/api/public/proof/stream/source/${secret()}`, '/api/public/proof/stream/source/[redacted]'],
      ['GET', `/api/proof/collect/drafts/drf_0000000000/uploads/upl_0000000000/preview?t=${secret()}&track=captions`,
        '/api/proof/collect/drafts/drf_0000000000/uploads/upl_0000000000/preview?t=[redacted]&track=[redacted]'],
      // No route matches these; the raw path is still masked.
      ['POST', `/api/public/proof/hooks/${secret()}/extra`, '/api/public/proof/hooks/[redacted]/extra'],
      ['POST', `/api/public/proof/Hooks/${secret()}`, '/api/public/proof/Hooks/[redacted]'],
      ['POST', `/api/public/proof/%68ooks/${secret()}`, null],
    ];
    try {
      for (const [method, url] of asked) {
        const res = await app.inject({ method: method as 'GET' | 'POST', url, ...(method === 'POST' ? { payload: { eventId: 'x' } } : {}) });
        assert.ok(res.statusCode < 500, `${method} ${url}: ${res.statusCode}`);
      }
    } finally {
      await app.close();
    }
    assert.ok(lines.length > 0, 'the logger wrote at info');
    const log = lines.join('\n');
    for (const s of secrets) assert.ok(!log.includes(s), `a secret reached the log: ${lines.find((l) => l.includes(s))}`);
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; req?: { method: string; url: string } })
      .filter((l) => l.msg === 'incoming request').map((l) => l.req!);
    assert.equal(logged.length, asked.length);
    asked.forEach(([method, , url], i) => {
      assert.equal(logged[i].method, method);
      if (url) assert.equal(logged[i].url, url);
    });
  });

  it('every line is JSON with the request id; credentials handed to a log call (headers, secrets, tokens) are redacted', async () => {
    const { lines, stream } = logSink();
    const app = await buildApp({ dataSource: ctx.dataSource, temporal: ctx.temporal, config: ctx.config, logger: { level: 'info', stream } });
    const credential = `svk_${randomBytes(16).toString('hex')}`;
    app.get('/log-probe', { config: { hidden: true } }, async (request) => {
      request.log.warn({ headers: request.headers, endpoint: { secret: credential }, token: credential }, 'probe');
      return { ok: true };
    });
    await app.ready();
    try {
      const res = await app.inject({ method: 'GET', url: '/log-probe', headers: { authorization: `Bearer ${credential}`, cookie: `sv_session=${credential}`,
        'x-request-id': 'req_probe_0001' } });
      assert.equal(res.statusCode, 200);
    } finally {
      await app.close();
    }
    assert.ok(!lines.join('\n').includes(credential), lines.find((l) => l.includes(credential)));
    const probe = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'probe')!;
    assert.equal(probe.reqId, 'req_probe_0001');
    assert.deepEqual([(probe.headers as Record<string, string>).authorization, (probe.headers as Record<string, string>).cookie, probe.token],
      ['[redacted]', '[redacted]', '[redacted]']);
  });
});

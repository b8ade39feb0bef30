import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { timestampedHmacHex, timestampedHmacProblem } from '../../runtime/timestamped-hmac';

describe('rules: timestamped HMAC signatures', () => {
  const secret = 'whsec_rule';
  const payload = Buffer.from('{"id":"evt_1"}');
  const now = 1_800_000_000;
  const sign = (t: number, s = secret) => createHmac('sha256', s).update(`${t}.${payload.toString()}`).digest('hex');
  const check = (timestamp: number, signatures: string[]) => timestampedHmacProblem({ secret, timestamp, payload, signatures, nowSeconds: now,
    toleranceSeconds: 300 });

  it('is hex HMAC-SHA256 over "<timestamp>.<payload>", the same for a string or a Buffer payload', () => {
    assert.equal(timestampedHmacHex(secret, now, payload), sign(now));
    assert.equal(timestampedHmacHex(secret, now, payload.toString()), sign(now));
  });

  it('accepts a matching signature within the tolerance either way, and any one of several', () => {
    assert.equal(check(now, [sign(now)]), null);
    assert.equal(check(now - 300, [sign(now - 300)]), null);
    assert.equal(check(now + 300, [sign(now + 300)]), null);
    assert.equal(check(now, ['00', sign(now, 'whsec_old'), sign(now)]), null);
  });

  it('refuses a stale or future timestamp one second past the tolerance', () => {
    assert.equal(check(now - 301, [sign(now - 301)]), 'stale');
    assert.equal(check(now + 301, [sign(now + 301)]), 'future');
  });

  it('refuses another secret, another timestamp, a changed payload, a short or no signature', () => {
    assert.equal(check(now, [sign(now, 'whsec_other')]), 'mismatch');
    assert.equal(check(now, [sign(now - 1)]), 'mismatch');
    assert.equal(timestampedHmacProblem({ secret, timestamp: now, payload: `${payload.toString()} `, signatures: [sign(now)], nowSeconds: now,
      toleranceSeconds: 300 }), 'mismatch');
    assert.equal(check(now, [sign(now).slice(0, 63)]), 'mismatch');
    assert.equal(check(now, []), 'mismatch');
  });

  it('judges the signature before the clock: a forged stale request is a mismatch', () => {
    assert.equal(check(now - 10_000, [sign(now)]), 'mismatch');
  });
});

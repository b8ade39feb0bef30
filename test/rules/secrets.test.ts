import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { newSecret, safeEqual, sha256Hex } from '../../db/rules/secrets';

describe('secrets (pure)', () => {
  it('a new secret is its prefix and 32 random bytes in base64url', () => {
    const secret = newSecret('svk');
    assert.match(secret, /^svk_[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(secret.slice(4), 'base64url').length, 32);
    assert.notEqual(newSecret('svk'), secret);
  });

  it('hashes to lower-case hex SHA-256, the same for a string and its bytes', () => {
    assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.equal(sha256Hex(Buffer.from('abc')), sha256Hex('abc'));
    assert.equal(sha256Hex('abc'), createHash('sha256').update('abc').digest('hex'));
  });

  it('compares equal strings as equal and anything else, of any length, as different', () => {
    assert.equal(safeEqual('same-secret', 'same-secret'), true);
    assert.equal(safeEqual('same-secret', 'same-secreT'), false);
    assert.equal(safeEqual('same-secret', 'same'), false);
    assert.equal(safeEqual('', 'x'), false);
    assert.equal(safeEqual('', ''), true);
  });
});

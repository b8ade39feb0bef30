import assert from 'node:assert/strict';
import { ID_PATTERN, newId } from '../../db/rules/ids';

describe('ids (pure)', () => {
  it('are the prefix, the time in base 32, and 16 random characters of base32 without i, l, o, u', () => {
    const id = newId('prf');
    assert.match(id, /^prf_[0-9a-v]{9}[0-9a-hjkmnp-tv-z]{16}$/);
    assert.match(id, ID_PATTERN);
  });

  it('are unique', () => {
    const ids = new Set(Array.from({ length: 2000 }, () => newId('sig')));
    assert.equal(ids.size, 2000);
  });

  it('ids made later sort after earlier ones (the time part leads)', async () => {
    const first = newId('evt');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = newId('evt');
    assert.ok(first.slice(0, 13) < second.slice(0, 13), `${first} before ${second}`);
  });

  it('the pattern refuses what is not an id', () => {
    for (const bad of ['prf', 'PRF_0123456789', 'prf_short', 'p_0123456789a', 'prf_0123456789abc/..', 'prf-0123456789abc']) {
      assert.doesNotMatch(bad, ID_PATTERN, bad);
    }
  });
});

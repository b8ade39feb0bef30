import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { CANONICALIZATION, NotJsonError, canonicalJson, legacySortedKeysJson, sha256OfCanonical, signedTextOf } from '../../db/rules/canonical-json';

describe('canonical JSON (pure)', () => {
  it('sorts keys at every level and keeps array order', () => {
    assert.equal(canonicalJson({ b: [3, { z: 1, a: 'é' }], a: null }), '{"a":null,"b":[3,{"a":"é","z":1}]}');
  });

  it('sorts keys by UTF-16 code units, not by locale', () => {
    assert.equal(canonicalJson({ b: 1, B: 2, 'é': 3, a: 4, '😀': 5, '\uFB33': 6 }), '{"B":2,"a":4,"b":1,"é":3,"😀":5,"\uFB33":6}');
  });

  it('leaves out undefined object properties and has no whitespace', () => {
    assert.equal(canonicalJson({ a: undefined, b: [1], c: 'x y' }), '{"b":[1],"c":"x y"}');
  });

  it('writes numbers as RFC 8785 (ECMAScript) does', () => {
    assert.equal(canonicalJson({ n: 1.5e21, m: 1e-7, z: -0, f: 0.1 + 0.2, q: 'say "hi"\n', t: true }),
      '{"f":0.30000000000000004,"m":1e-7,"n":1.5e+21,"q":"say \\"hi\\"\\n","t":true,"z":0}');
  });

  it('writes exactly what the off-the-shelf canonicalize package writes', () => {
    const samples: unknown[] = [
      { schema: 'service-proof-receipt-v1', canonicalization: 'RFC8785', terms: { channels: ['web', 'sales'], validUntil: null }, n: [1, 2.5, -3e30] },
      [{ '\u20ac': 'euro', '\r': 'cr', '1': 'one' }, 'tab\there', '\u0007', '\u2028'],
      { text: 'Emoji 👍🏽 and flags 🇫🇷, accents é', rating: 4.5, nested: { deep: [[[]], {}] } },
    ];
    for (const sample of samples) assert.equal(canonicalJson(sample), canonicalize(sample));
  });

  it('refuses values that have no JSON form instead of writing something else', () => {
    const refused: Array<[string, unknown]> = [
      ['NaN', { n: NaN }],
      ['Infinity', [Infinity]],
      ['a bigint', { n: 10n }],
      ['a function', { f: () => 1 }],
      ['a symbol', { s: Symbol('x') }],
      ['undefined at the top', undefined],
      ['undefined in an array', [undefined, 1]],
      ['a Date', { at: new Date(0) }],
      ['a Map', new Map([['a', 1]])],
      ['a Buffer', { b: Buffer.from('x') }],
      ['a lone high surrogate', { t: 'a\uD800b' }],
      ['a lone low surrogate in a key', { '\uDC00': 1 }],
    ];
    for (const [name, value] of refused) assert.throws(() => canonicalJson(value), NotJsonError, name);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    assert.throws(() => canonicalJson(circular), NotJsonError);
  });

  it('the same value in any key order gives the same digest, the SHA-256 of its canonical text', () => {
    const a = sha256OfCanonical({ x: 1, y: { b: 2, a: 1 } });
    assert.equal(a, sha256OfCanonical({ y: { a: 1, b: 2 }, x: 1 }));
    assert.equal(a, createHash('sha256').update('{"x":1,"y":{"a":1,"b":2}}').digest('hex'));
    assert.notEqual(a, sha256OfCanonical({ x: 2, y: { a: 1, b: 2 } }));
  });

  it('a signed document is verified over the form it names: RFC 8785, or the legacy form when it names none', () => {
    const current = { schema: 's', canonicalization: CANONICALIZATION, b: 1, a: 'x' };
    assert.equal(signedTextOf(current), canonicalize(current));
    const before = { schema: 's', b: 1, a: 'x' };
    assert.equal(signedTextOf(before), legacySortedKeysJson(before));
    assert.equal(signedTextOf(before), '{"a":"x","b":1,"schema":"s"}');
    assert.equal(signedTextOf({ ...before, canonicalization: 'sorted-keys-json' }), null);
    assert.equal(signedTextOf({ canonicalization: CANONICALIZATION, n: NaN }), null);
  });
});

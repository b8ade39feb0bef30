import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { canonicalJson, sha256OfCanonical } from '../../db/rules/canonical-json';

describe('canonical JSON (pure)', () => {
  it('sorts keys at every level and keeps array order', () => {
    assert.equal(canonicalJson({ b: [3, { z: 1, a: 'é' }], a: null }), '{"a":null,"b":[3,{"a":"é","z":1}]}');
  });

  it('sorts keys by UTF-16 code units, not by locale', () => {
    assert.equal(canonicalJson({ b: 1, B: 2, 'é': 3, a: 4 }), '{"B":2,"a":4,"b":1,"é":3}');
  });

  it('drops undefined properties, writes undefined array entries as null, and has no whitespace', () => {
    assert.equal(canonicalJson({ a: undefined, b: [undefined, 1], c: 'x y' }), '{"b":[null,1],"c":"x y"}');
    assert.equal(canonicalJson(undefined), 'null');
  });

  it('writes strings and numbers as JSON.stringify does', () => {
    assert.equal(canonicalJson({ n: 1.5e21, q: 'say "hi"\n', t: true }), '{"n":1.5e+21,"q":"say \\"hi\\"\\n","t":true}');
  });

  it('the same value in any key order gives the same digest, the SHA-256 of its canonical text', () => {
    const a = sha256OfCanonical({ x: 1, y: { b: 2, a: 1 } });
    assert.equal(a, sha256OfCanonical({ y: { a: 1, b: 2 }, x: 1 }));
    assert.equal(a, createHash('sha256').update('{"x":1,"y":{"a":1,"b":2}}').digest('hex'));
    assert.notEqual(a, sha256OfCanonical({ x: 2, y: { a: 1, b: 2 } }));
  });
});

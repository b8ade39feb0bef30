import assert from 'node:assert/strict';
import { lexemesOfTsvector } from '../../db/rules/tsvector-text';

describe('lexemesOfTsvector', () => {
  it('splits title (weight A) from body lexemes, in the order PostgreSQL prints them', () => {
    assert.deepEqual(lexemesOfTsvector("'ash':5A 'bodi':10B,12B 'cr':4A 'test':7A,11B"), { title: ['ash', 'cr', 'test'], body: ['bodi'] });
  });

  it('reads doubled quotes, backslashes and a vector without positions', () => {
    assert.deepEqual(lexemesOfTsvector("'it''s':1A 'a\\\\b':2B 'c d'"), { title: ["it's"], body: ['a\\b', 'c d'] });
  });

  it('reads an empty vector', () => {
    assert.deepEqual(lexemesOfTsvector(''), { title: [], body: [] });
  });
});

import assert from 'node:assert/strict';
import { candidateQueries, queryWords } from '../../db/customer-loop/duplicates';
import { FULL_TEXT_MODEL, TRIGRAM_MODEL, canonicalLexeme, duplicateScore, measureDuplicate, oneEditApart } from '../../db/rules/duplicate-score';

const none = { trigram: null, ftsRank: 0 };

describe('duplicate score', () => {
  it('one edit apart: insert, delete, substitute, swap of neighbours; not two edits, not equal', () => {
    for (const [a, b] of [['export', 'exprt'], ['export', 'exxport'], ['export', 'exbort'], ['export', 'exprot'], ['crash', 'crahs']]) {
      assert.ok(oneEditApart(a, b), `${a} ${b}`);
      assert.ok(oneEditApart(b, a), `${b} ${a}`);
    }
    for (const [a, b] of [['export', 'export'], ['export', 'import'], ['export', 'exp'], ['crash', 'chars']]) assert.ok(!oneEditApart(a, b), `${a} ${b}`);
  });

  it('merges synonyms, counts typos, and ignores generic words in matched', () => {
    assert.equal(canonicalLexeme('night'), 'dark');
    assert.equal(canonicalLexeme('color'), 'colour');
    const m = measureDuplicate({ title: ['night', 'mode'], body: ['pleas'] }, { title: ['dark', 'mode'], body: ['pleas'] }, none);
    assert.deepEqual(m.matched.sort(), ['dark', 'mode']);
    assert.equal(m.cosine, 1);
    const typo = measureDuplicate({ title: ['exprot', 'csv'], body: [] }, { title: ['export', 'csv'], body: [] }, none);
    assert.deepEqual(typo.matched.sort(), ['csv', 'export']);
    assert.ok(typo.cosine > 0.85 && typo.cosine < 1);
  });

  it('scores from 0 to 1, higher for more in common, with either model', () => {
    const same = measureDuplicate({ title: ['dark', 'mode'], body: ['bright', 'eye'] }, { title: ['dark', 'mode'], body: ['bright', 'eye'] },
      { trigram: 1, ftsRank: 0.5 });
    const some = measureDuplicate({ title: ['dark', 'mode'], body: ['bright', 'eye'] }, { title: ['dark', 'theme'], body: ['invoic'] },
      { trigram: 0.4, ftsRank: 0.2 });
    const nothing = measureDuplicate({ title: ['dark', 'mode'], body: [] }, { title: ['invoic', 'pdf'], body: [] }, { trigram: 0, ftsRank: 0 });
    for (const model of [TRIGRAM_MODEL, FULL_TEXT_MODEL]) {
      const [a, b, c] = [same, some, nothing].map((x) => duplicateScore(x, model));
      assert.ok(a > b && b > c, `${a} ${b} ${c}`);
      assert.ok(a <= 1 && c >= 0);
      assert.ok(a >= 0.9 && c < 0.1);
    }
  });

  it('looks for candidates with the title first, then the rarest words; two shared words where one would match too many', () => {
    const lexemes = { title: ['export', 'pleas'], body: ['csv', 'report', 'monthli', 'spreadsheet'] };
    const small = queryWords(lexemes, { rows: 400, shares: new Map() });
    assert.deepEqual(small, { words: ['export', 'csv', 'report', 'monthli', 'spreadsheet'], shared: 1 });
    const big = queryWords(lexemes, { rows: 100_000, shares: new Map([['export', 0.02], ['report', 0.04], ['csv', 0.01], ['monthli', 0.03],
      ['spreadsheet', 0.005]]) });
    assert.equal(big.shared, 2);
    assert.equal(big.words[0], 'export');
    assert.ok(!big.words.includes('report'), 'the commonest word goes first');
    // A short text of common words: all of them, as two would still match too many rows.
    const common = queryWords({ title: ['theme'], body: ['hurt', 'eye'] },
      { rows: 100_000, shares: new Map([['theme', 0.12], ['eye', 0.14], ['hurt', 0.15]]) });
    assert.deepEqual(common, { words: ['theme', 'eye', 'hurt'], shared: 3 });
    const query = candidateQueries({ words: ['export', "it's"], shared: 1 })!;
    assert.equal(query.filter, "('export' | 'download') | ('it''s')");
    const pairs = candidateQueries({ words: ['a', 'b', 'c'], shared: 2 })!;
    assert.equal(pairs.filter, "(('a') & ('b')) | (('a') & ('c')) | (('b') & ('c'))");
    assert.equal(candidateQueries({ words: ['a', 'b', 'c'], shared: 3 })!.filter, "(('a') & ('b') & ('c'))");
    assert.equal(candidateQueries({ words: [], shared: 1 }), null);
  });
});

import assert from 'node:assert/strict';
import { DEFAULT_THEME, graphemesOf, quoteCardSvg, wrap } from '../../db/rules/proof-quote-card';

describe('quote card line breaks by grapheme', () => {
  it('keeps the plain word wrap', () => {
    assert.deepEqual(wrap('aaa bbb ccc dddddddd', 7), ['aaa bbb', 'ccc', 'ddddddd', 'd']);
  });

  it('never splits an emoji, a flag, a family or a letter with its accent', () => {
    const word = '👍🏽🇫🇷👨‍👩‍👧é́😀😀';
    assert.equal(graphemesOf(word).length, 6);
    for (let max = 1; max <= 6; max++) {
      const lines = wrap(word, max);
      assert.equal(lines.join(''), word, `max ${max}`);
      for (const line of lines) {
        assert.ok(!line.includes('\uFFFD'));
        assert.ok(Buffer.from(line, 'utf8').toString('utf8') === line, 'no lone surrogate');
        assert.ok(graphemesOf(line).length <= max);
      }
    }
  });

  it('the card keeps the customer\'s words byte for byte', () => {
    const quote = `${'Great 😀 '.repeat(20)}🇫🇷`;
    const svg = quoteCardSvg({
      format: 'square', quote, attribution: '', disclosure: null, theme: DEFAULT_THEME,
    });
    assert.ok(!svg.includes('\uFFFD'));
    const texts = [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    assert.equal(texts.join(' ').replace(/[“”]/g, ''), quote.trim());
  });
});

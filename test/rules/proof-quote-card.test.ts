import assert from 'node:assert/strict';
import { DEFAULT_THEME, QUOTE_CARD_FORMATS, QuoteCard, escapeXml, graphemesOf, quoteCardSvg, wrap } from '../../db/rules/proof-quote-card';
import { ServiceError } from '../../runtime/service-error';

const card = (patch: Partial<QuoteCard> = {}): QuoteCard => ({
  format: 'square', quote: 'Support answered within two hours.', attribution: 'Ada, CTO at A Ltd', disclosure: null, theme: DEFAULT_THEME, ...patch,
});

describe('proof quote card (pure)', () => {
  it('escapes markup and drops XML-illegal control characters', () => {
    assert.equal(escapeXml(`<script>alert("x" & 'y')</script>\u0001\u001F\uFFFE`), '&lt;script&gt;alert(&quot;x&quot; &amp; &apos;y&apos;)&lt;/script&gt;');
    assert.equal(escapeXml('tab\tand\nnewline'), 'tab\tand\nnewline');
  });

  it('wraps greedily at the width and cuts only a word longer than a line', () => {
    assert.deepEqual(wrap('a bb ccc dddd', 6), ['a bb', 'ccc', 'dddd']);
    assert.deepEqual(wrap('  spaced   out  ', 20), ['spaced out']);
    assert.deepEqual(wrap('x abcdefghij', 4), ['x', 'abcd', 'efgh', 'ij']);
    assert.deepEqual(wrap('', 4), []);
  });

  it('is deterministic and sized to its format', () => {
    for (const format of Object.keys(QUOTE_CARD_FORMATS) as Array<keyof typeof QUOTE_CARD_FORMATS>) {
      const svg = quoteCardSvg(card({ format }));
      const { width, height } = QUOTE_CARD_FORMATS[format];
      assert.equal(svg, quoteCardSvg(card({ format })));
      assert.match(svg, new RegExp(`^<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`));
      assert.ok(svg.endsWith('</svg>\n'));
    }
  });

  it('shows the quote in curly quotes, the attribution, the disclosure and the theme; a quote with markup stays text', () => {
    const svg = quoteCardSvg(card({ quote: '<b>Great</b>', disclosure: 'Incentivized: gift card',
      theme: { background: '#000000', foreground: '#eeeeee', accent: '#ff0000' } }));
    assert.match(svg, /“&lt;b&gt;Great&lt;\/b&gt;”/);
    assert.doesNotMatch(svg, /<b>/);
    assert.match(svg, /— Ada, CTO at A Ltd/);
    assert.match(svg, /Incentivized: gift card/);
    assert.match(svg, /fill="#000000"/);
    assert.match(svg, /fill="#ff0000"/);
  });

  it('an anonymous card has no attribution line', () => {
    assert.doesNotMatch(quoteCardSvg(card({ attribution: '' })), /—/);
  });

  it('never cuts the customer\'s words: a quote too long for the card is refused with VALIDATION_FAILED on excerpt', () => {
    const long = 'word '.repeat(2000).trim();
    assert.throws(() => quoteCardSvg(card({ format: 'landscape', quote: long })), (err: unknown) =>
      err instanceof ServiceError && err.code === 'VALIDATION_FAILED' && (err.details as Array<{ path: string }>)[0].path === 'excerpt');
    const svg = quoteCardSvg(card({ quote: 'word '.repeat(60).trim() }));
    assert.equal((svg.match(/word/g) ?? []).length, 60, 'a long quote that fits keeps every word');
  });
});

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

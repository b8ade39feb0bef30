import { validationFailed } from '../../runtime/service-error';

/** Pixel sizes of the quote-card formats (social square, portrait, link-preview landscape, story). */
export const QUOTE_CARD_FORMATS = {
  square: { width: 1080, height: 1080 },
  portrait: { width: 1080, height: 1350 },
  landscape: { width: 1200, height: 628 },
  story: { width: 1080, height: 1920 },
} as const;
export type QuoteCardFormat = keyof typeof QUOTE_CARD_FORMATS;

export interface QuoteCardTheme { background: string; foreground: string; accent: string }
export const DEFAULT_THEME: QuoteCardTheme = { background: '#ffffff', foreground: '#1f2933', accent: '#3b82f6' };

export interface QuoteCard {
  format: QuoteCardFormat;
  quote: string;
  /** One line naming the customer as their consent allows; empty when anonymous. */
  attribution: string;
  disclosure: string | null;
  theme: QuoteCardTheme;
}

const FONT = 'Helvetica, Arial, sans-serif';
// An average glyph of the font is about half its size wide; wrapping counts characters against that.
const GLYPH_WIDTH = 0.52;
const LINE_HEIGHT = 1.3;

/** Text as XML character data: markup in a quote (even `<script>`) stays text; XML-illegal controls go. */
export function escapeXml(text: string): string {
  return text
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** User-perceived characters: an emoji, a flag or a letter with its accents is one, never split. */
export function graphemesOf(text: string): string[] {
  return Array.from(graphemes.segment(text), (s) => s.segment);
}

/** Greedy word wrap at `max` graphemes; a word longer than a line is cut between graphemes. */
export function wrap(text: string, max: number): string[] {
  const lines: string[] = [];
  let line: string[] = [];
  for (const word of text.split(/\s+/).filter(Boolean).map(graphemesOf)) {
    let rest = word;
    while (rest.length > max) {
      if (line.length) lines.push(line.join(''));
      lines.push(rest.slice(0, max).join(''));
      rest = rest.slice(max);
      line = [];
    }
    if (!line.length) line = rest;
    else if (line.length + 1 + rest.length <= max) line = [...line, ' ', ...rest];
    else {
      lines.push(line.join(''));
      line = rest;
    }
  }
  if (line.length) lines.push(line.join(''));
  return lines;
}

/**
 * A deterministic SVG quote card: the same input gives the same bytes (no clock, no random ids). The
 * quote shrinks from a large size until it fits; the customer's words are never cut, so a quote that
 * does not fit even at the smallest size is refused (send a shorter verbatim excerpt).
 */
export function quoteCardSvg(card: QuoteCard): string {
  const { width, height } = QUOTE_CARD_FORMATS[card.format];
  const margin = Math.round(width * 0.08);
  const footer = Math.round(height * 0.2);
  const room = height - 2 * margin - footer;
  let size = Math.round(width / 16);
  const minSize = Math.round(width / 40);
  let lines = wrap(`“${card.quote}”`, Math.floor((width - 2 * margin) / (size * GLYPH_WIDTH)));
  while (lines.length * size * LINE_HEIGHT > room) {
    size -= 2;
    if (size < minSize) throw validationFailed([{ path: 'excerpt', message: `the quote does not fit a ${card.format} card; send a shorter verbatim excerpt` }]);
    lines = wrap(`“${card.quote}”`, Math.floor((width - 2 * margin) / (size * GLYPH_WIDTH)));
  }
  const lineHeight = Math.round(size * LINE_HEIGHT);
  const small = Math.round(width / 36);
  const footerTop = height - margin - footer + small * 2;
  const text = (y: number, fontSize: number, fill: string, content: string, weight = 'normal') =>
    `<text x="${margin}" y="${y}" font-family="${FONT}" font-size="${fontSize}" font-weight="${weight}" fill="${fill}">${escapeXml(content)}</text>`;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<rect width="${width}" height="${height}" fill="${card.theme.background}"/>`,
    `<rect x="${margin}" y="${margin - small}" width="${Math.round(width * 0.12)}" height="${Math.round(small / 3)}" fill="${card.theme.accent}"/>`,
    ...lines.map((line, i) => text(margin + size + i * lineHeight, size, card.theme.foreground, line)),
    ...(card.attribution ? [text(footerTop, small, card.theme.foreground, `— ${card.attribution}`, 'bold')] : []),
    ...(card.disclosure ? [text(footerTop + Math.round(small * 1.6), Math.round(small * 0.8), card.theme.foreground, card.disclosure)] : []),
    '</svg>',
  ];
  return `${parts.join('\n')}\n`;
}

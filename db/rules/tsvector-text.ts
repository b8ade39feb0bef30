import type { TextLexemes } from './duplicate-score';

/**
 * Reads PostgreSQL's text form of a weighted tsvector (`'bodi':10B,12B 'test':7A,11B`): a lexeme with a
 * position of weight A is the title's, any other the body's. Lexemes are single-quoted, with quotes
 * doubled and backslashes escaped; a lexeme without positions (a stripped vector) counts as the body's.
 */
export function lexemesOfTsvector(text: string): TextLexemes {
  const title: string[] = [];
  const body: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] !== "'") {
      i += 1;
      continue;
    }
    let lexeme = '';
    i += 1;
    while (i < text.length) {
      const c = text[i];
      if (c === '\\') {
        lexeme += text[i + 1] ?? '';
        i += 2;
      } else if (c === "'" && text[i + 1] === "'") {
        lexeme += "'";
        i += 2;
      } else if (c === "'") {
        i += 1;
        break;
      } else {
        lexeme += c;
        i += 1;
      }
    }
    let positions = '';
    if (text[i] === ':') {
      const end = text.indexOf(' ', i);
      positions = text.slice(i + 1, end === -1 ? text.length : end);
      i = end === -1 ? text.length : end;
    }
    (positions.includes('A') ? title : body).push(lexeme);
  }
  return { title, body };
}

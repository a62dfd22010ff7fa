/**
 * Text preparation shared by the search index and search queries (D-SEARCH-1).
 *
 * FTS5's unicode61 tokenizer folds case and accents but treats a run of CJK characters as one
 * token, so `東京` would not find `東京タワー`. We index CJK characters as one token each and
 * turn a query word into a phrase of the same tokens: a phrase matches consecutive tokens, which
 * is exactly a substring match. User text never reaches FTS syntax: each query word becomes a
 * quoted phrase built only from letter/digit runs.
 */
import { engine } from '../db/dialect.js';

const CJK = /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}])/gu;
const TOKEN = /[\p{L}\p{M}\p{N}]+/gu;

/** Text as it is stored in the index. */
export function indexText(text: string): string {
  return text.replace(CJK, ' $1 ');
}

/** One word of a query: its tokens (a phrase), whether it is the last (a prefix), whether a `#tag`. */
interface QueryTerm {
  tokens: string[];
  prefix: boolean;
  tag: boolean;
}

function queryTerms(q: string): QueryTerm[] {
  const words = q.trim().split(/\s+/).filter(Boolean);
  return words.flatMap((word, index) => {
    const tag = word.startsWith('#') && word.length > 1;
    const tokens = indexText(tag ? word.slice(1) : word).match(TOKEN);
    return tokens ? [{ tokens, prefix: index === words.length - 1, tag }] : [];
  });
}

/**
 * The search expression for `q` in the language of the engine's index (FTS5 MATCH or
 * PostgreSQL tsquery), or null when `q` has no searchable characters. With `lastWordTerms`
 * (FTS5 only), the last word is those index terms instead of a prefix: the same notes match
 * (lastWordPrefix says when the terms can be listed), and FTS5 reads a few doclists instead of
 * merging every term the prefix starts, three times per search (decision 0003).
 */
export function buildMatchQuery(q: string, lastWordTerms?: readonly string[]): string | null {
  const terms = queryTerms(q);
  if (terms.length === 0) return null;
  if (engine() === 'postgres') {
    const operands = terms.flatMap(tsqueryTerm);
    return operands.length > 0 ? operands.join(' & ') : null;
  }
  return terms
    .map(({ tokens, prefix, tag }) => {
      const phrase =
        prefix && lastWordTerms
          ? `(${lastWordTerms.map((term) => `"${term}"`).join(' OR ')})`
          : `"${tokens.join(' ')}"${prefix ? '*' : ''}`;
      return tag ? `tags : ${phrase}` : phrase;
    })
    .join(' AND ');
}

/** Index terms are compared as FTS5 folds them; for these characters that is lower case only. */
const ASCII_TOKEN = /^[a-z0-9]+$/;

/**
 * The last word of `q` as the start of the FTS5 index terms it matches, when those can be
 * listed: one token of ASCII letters and digits (FTS5's unicode61 folds them by lower case alone,
 * so the listed terms are exactly those the prefix query matches; other scripts keep the prefix),
 * of at least 4 characters (shorter ones have their own prefix index and start too many terms).
 * Null on PostgreSQL, whose tsquery prefix reads the GIN index directly.
 */
export function lastWordPrefix(q: string): string | null {
  if (engine() === 'postgres') return null;
  const last = queryTerms(q).at(-1);
  if (last?.tokens.length !== 1) return null;
  const token = last.tokens[0]!.toLowerCase();
  return token.length >= 4 && ASCII_TOKEN.test(token) ? token : null;
}

/*
 * PostgreSQL (docs/decisions/0015-postgresql.md): the document is a tsvector written here, not
 * by to_tsvector, so both engines cut text into the same tokens (TOKEN, CJK one character a
 * token) and fold them the same way (case and accents, like unicode61 remove_diacritics 2).
 * Title, content and tags are the weights A, B and C, so a `#tag` word matches tags only; a
 * gap in positions between them keeps a phrase from spanning two of them.
 */

/** PostgreSQL keeps a lexeme's positions up to this one; longer texts share it (tsvector limit). */
const MAX_POSITION = 16_383;
/** PostgreSQL keeps at most this many positions of one lexeme. */
const MAX_POSITIONS_PER_LEXEME = 256;
/** A lexeme must stay under 2 KiB: 500 characters are at most 2,000 bytes. */
const MAX_LEXEME_LENGTH = 500;
/** A tsvector must stay under 1 MiB; the words of a text past this size are not indexed. */
const MAX_DOCUMENT_BYTES = 900_000;

/** A token as the PostgreSQL index stores it: lower case, without accents. */
function foldToken(token: string): string {
  return token
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .normalize('NFC')
    .toLowerCase()
    .slice(0, MAX_LEXEME_LENGTH);
}

/** A lexeme quoted for tsvector and tsquery input (tokens hold no quotes or backslashes). */
const quoted = (lexeme: string) => `'${lexeme}'`;

/** A term as a tsquery operand; none when its tokens fold to nothing (marks alone). */
function tsqueryTerm({ tokens, prefix, tag }: QueryTerm): string[] {
  const lexemes = tokens.map(foldToken).filter(Boolean);
  const weight = tag ? 'C' : '';
  const operands = lexemes.map((lexeme, i) => {
    const star = prefix && i === lexemes.length - 1 ? '*' : '';
    return `${quoted(lexeme)}${star || weight ? `:${star}${weight}` : ''}`;
  });
  if (operands.length <= 1) return operands;
  return [`(${operands.join(' <-> ')})`];
}

/** The tsvector input of a search document whose parts went through indexText. */
export function tsvectorInput(doc: { title: string; content: string; tags: string }): string {
  const positions = new Map<string, string[]>();
  let bytes = 0;
  let position = 0;
  for (const [text, weight] of [
    [doc.title, 'A'],
    [doc.content, 'B'],
    [doc.tags, 'C'],
  ] as const) {
    position += 1;
    for (const token of text.match(TOKEN) ?? []) {
      position += 1;
      const lexeme = foldToken(token);
      if (lexeme === '') continue;
      let list = positions.get(lexeme);
      if (!list) {
        if (bytes + Buffer.byteLength(lexeme) > MAX_DOCUMENT_BYTES) continue;
        bytes += Buffer.byteLength(lexeme) + 8;
        list = [];
        positions.set(lexeme, list);
      }
      if (list.length < MAX_POSITIONS_PER_LEXEME) {
        list.push(`${Math.min(position, MAX_POSITION)}${weight}`);
        bytes += 2;
      }
    }
  }
  return [...positions].map(([lexeme, list]) => `${quoted(lexeme)}:${list.join(',')}`).join(' ');
}

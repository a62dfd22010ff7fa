/**
 * Text preparation shared by the search index and search queries (D-SEARCH-1).
 *
 * FTS5's unicode61 tokenizer folds case and accents but treats a run of CJK characters as one
 * token, so `東京` would not find `東京タワー`. We index CJK characters as one token each and
 * turn a query word into a phrase of the same tokens: a phrase matches consecutive tokens, which
 * is exactly a substring match. User text never reaches FTS syntax: each query word becomes a
 * quoted phrase built only from letter/digit runs.
 */
const CJK = /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}])/gu;
const TOKEN = /[\p{L}\p{M}\p{N}]+/gu;

/** Text as it is stored in the index. */
export function indexText(text: string): string {
  return text.replace(CJK, ' $1 ');
}

/** An FTS5 MATCH expression for `q`, or null when `q` has no searchable characters. */
export function buildMatchQuery(q: string): string | null {
  const words = q.trim().split(/\s+/).filter(Boolean);
  const terms: string[] = [];
  words.forEach((word, index) => {
    const isTag = word.startsWith('#') && word.length > 1;
    const tokens = indexText(isTag ? word.slice(1) : word).match(TOKEN);
    if (!tokens) return;
    const isLast = index === words.length - 1;
    const phrase = `"${tokens.join(' ')}"${isLast ? '*' : ''}`;
    terms.push(isTag ? `tags : ${phrase}` : phrase);
  });
  return terms.length > 0 ? terms.join(' AND ') : null;
}

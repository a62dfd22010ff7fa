import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type Engine, engine, useEngine } from '../src/db/dialect.js';
import { buildMatchQuery, indexText, tsvectorInput } from '../src/model/searchText.js';

/** buildMatchQuery for one engine, whichever this process's database is (the call is synchronous). */
function matchQueryOf(wanted: Engine, q: string): string | null {
  const current = engine();
  useEngine(wanted);
  try {
    return buildMatchQuery(q);
  } finally {
    useEngine(current);
  }
}
const fts5 = (q: string) => matchQueryOf('sqlite', q);
const tsquery = (q: string) => matchQueryOf('postgres', q);

describe('buildMatchQuery (D-SEARCH-1)', () => {
  it('quotes every word, ANDs them and makes the last one a prefix', () => {
    assert.equal(fts5('buy milk'), '"buy" AND "milk"*');
  });

  it('searches #words in the tags column', () => {
    assert.equal(fts5('#work plan'), 'tags : "work" AND "plan"*');
  });

  it('turns CJK text into a phrase of single characters (substring match)', () => {
    assert.equal(fts5('京タ'), '"京 タ"*');
    assert.equal(indexText('東京タワー').trim().split(/\s+/).join('|'), '東|京|タ|ワ|ー');
  });

  it('drops FTS syntax characters and words made only of them', () => {
    assert.equal(
      fts5('"a" OR b* -c (d) NEAR e:f'),
      '"a" AND "OR" AND "b" AND "c" AND "d" AND "NEAR" AND "e f"*',
    );
    assert.equal(fts5('*** ""'), null);
  });

  it('never produces a quote inside a phrase, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 100 }), (q) => {
        const match = fts5(q);
        if (match === null) return;
        for (const term of match.split(' AND ')) assert.match(term, /^(tags : )?"[^"]+"\*?$/u);
      }),
      { seed: 20261121, numRuns: 500 },
    );
  });
});

describe('PostgreSQL search documents and queries (docs/decisions/0015-postgresql.md)', () => {
  it('folds case and accents, phrases CJK characters and makes the last word a prefix', () => {
    assert.equal(tsquery('Café crème'), "'cafe' & 'creme':*");
    assert.equal(tsquery('京タ'), "('京' <-> 'タ':*)");
    assert.equal(tsquery('#work plan'), "'work':C & 'plan':*");
    assert.equal(tsquery('#東京'), "('東':C <-> '京':*C)");
    assert.equal(tsquery('*** ""'), null);
  });

  it('weighs title, content and tags A, B and C, with a gap so that no phrase spans two', () => {
    const doc = { title: indexText('Plan Été'), content: indexText('plan 東京'), tags: indexText('work') };
    assert.equal(tsvectorInput(doc), "'plan':2A,5B 'ete':3A '東':6B '京':7B 'work':9C");
  });

  it('only writes lexemes made of letters, marks and digits, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 100 }), (text) => {
        const input = tsvectorInput({ title: indexText(text), content: '', tags: '' });
        for (const entry of input.split(' ').filter(Boolean)) {
          assert.match(entry, /^'[\p{L}\p{N}]+':\d+A(,\d+A)*$/u);
        }
        const query = tsquery(text);
        if (query !== null) assert.doesNotMatch(query, /''|\\/);
      }),
      { seed: 20261123, numRuns: 300 },
    );
  });
});

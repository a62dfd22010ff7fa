import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { buildMatchQuery, indexText } from '../src/features/search/searchText.js';

describe('buildMatchQuery (D-SEARCH-1)', () => {
  it('quotes every word, ANDs them and makes the last one a prefix', () => {
    assert.equal(buildMatchQuery('buy milk'), '"buy" AND "milk"*');
  });

  it('searches #words in the tags column', () => {
    assert.equal(buildMatchQuery('#work plan'), 'tags : "work" AND "plan"*');
  });

  it('turns CJK text into a phrase of single characters (substring match)', () => {
    assert.equal(buildMatchQuery('京タ'), '"京 タ"*');
    assert.equal(indexText('東京タワー').trim().split(/\s+/).join('|'), '東|京|タ|ワ|ー');
  });

  it('drops FTS syntax characters and words made only of them', () => {
    assert.equal(
      buildMatchQuery('"a" OR b* -c (d) NEAR e:f'),
      '"a" AND "OR" AND "b" AND "c" AND "d" AND "NEAR" AND "e f"*',
    );
    assert.equal(buildMatchQuery('*** ""'), null);
  });

  it('never produces a quote inside a phrase, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 100 }), (q) => {
        const match = buildMatchQuery(q);
        if (match === null) return;
        for (const term of match.split(' AND ')) assert.match(term, /^(tags : )?"[^"]+"\*?$/u);
      }),
      { seed: 20261121, numRuns: 500 },
    );
  });
});

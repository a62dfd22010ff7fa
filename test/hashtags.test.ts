import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { extractHashtags, MAX_TAG_LENGTH, MAX_TAGS_PER_NOTE } from '../src/shared/hashtags.js';

const tags = (content: string, title = '') => extractHashtags(title, content);

describe('extractHashtags (D-TAG-1)', () => {
  it('finds hashtags at the start, after whitespace and after an opening bracket', () => {
    assert.deepEqual(tags('#start middle #mid (#paren) [#square] {#curly}'), [
      'curly',
      'mid',
      'paren',
      'square',
      'start',
    ]);
  });

  it('reads the title as well as the content', () => {
    assert.deepEqual(extractHashtags('Trip #Japan', 'pack #bags'), ['bags', 'japan']);
  });

  it('keeps nested tags, underscores and dashes', () => {
    assert.deepEqual(tags('#work/q3 #to_do #follow-up'), ['follow-up', 'to_do', 'work/q3']);
  });

  it('lower-cases in any script and de-duplicates', () => {
    assert.deepEqual(tags('#Café #CAFÉ #Ελλάδα #日本語 #हिन्दी'), ['café', 'ελλάδα', 'हिन्दी', '日本語']);
  });

  it('ignores Markdown headings, hashes inside words and URLs', () => {
    assert.deepEqual(tags('# Heading\n## Sub\na#b https://x.test/#top mail#x'), []);
  });

  it('ignores pure numbers and runs without a letter', () => {
    assert.deepEqual(tags('#1 #2024 #12-3 #___ #2024q3'), ['2024q3']);
  });

  it('ignores hashtags inside fenced code blocks, but not after the fence closes', () => {
    const content = [
      '#before',
      '```js',
      'x = "#inside"',
      '#alsoinside',
      '```',
      '#after',
      '~~~',
      '#tilde',
      '~~~',
    ].join('\n');
    assert.deepEqual(tags(content), ['after', 'before']);
  });

  it('treats a run longer than 64 characters as no tag, and 64 as a tag', () => {
    const ok = 'a'.repeat(MAX_TAG_LENGTH);
    assert.deepEqual(tags(`#${ok} #${ok}b`), [ok]);
  });

  it(`keeps the first ${MAX_TAGS_PER_NOTE} distinct hashtags, title first; the rest are text`, () => {
    const names = Array.from({ length: MAX_TAGS_PER_NOTE + 50 }, (_, n) => `t${String(n).padStart(3, '0')}`);
    const content = `#${names[0]} ${names.map((name) => `#${name}`).join(' ')}`; // a repeat counts once
    const found = extractHashtags('#Title', content);
    assert.equal(found.length, MAX_TAGS_PER_NOTE);
    assert.deepEqual(found, ['title', ...names.slice(0, MAX_TAGS_PER_NOTE - 1)].sort());
  });

  it('drops a trailing slash and stops at punctuation', () => {
    assert.deepEqual(tags('#work/ #end. #comma, #q?'), ['comma', 'end', 'q', 'work']);
  });
});

const ALLOWED = /^[\p{L}\p{M}\p{N}_\-/]+$/u;

describe('extractHashtags properties', () => {
  it('never throws and never returns a tag the rules exclude', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 300 }),
        fc.string({ maxLength: 80 }),
        (content, title) => {
          for (const tag of extractHashtags(title, content)) {
            assert.ok(tag.length >= 1 && tag.length <= MAX_TAG_LENGTH, `length of ${tag}`);
            assert.match(tag, ALLOWED);
            assert.match(tag, /\p{L}/u);
            assert.equal(tag, tag.toLowerCase());
            assert.ok(!tag.endsWith('/'));
          }
        },
      ),
      { seed: 20261121, numRuns: 500 },
    );
  });

  it('finds every well-formed hashtag placed after a space', () => {
    const tagArb = fc
      .tuple(
        fc.constantFrom('a', 'Z', 'é', 'ж', '日', 'ß'),
        fc.string({ unit: fc.constantFrom('a', 'b', '1', '_', '-', 'ü', '中'), maxLength: 20 }),
      )
      .map(([first, rest]) => first + rest);
    fc.assert(
      fc.property(fc.array(tagArb, { minLength: 1, maxLength: 5 }), fc.lorem(), (names, filler) => {
        const text = names.map((n) => `${filler} #${n}`).join(' ');
        const found = extractHashtags('', text);
        for (const name of names) assert.ok(found.includes(name.toLowerCase()), `${name} in ${found}`);
      }),
      { seed: 20261121, numRuns: 300 },
    );
  });

  it('ignores everything inside a fenced block', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (inner) => {
        const safeInner = inner.replaceAll('`', '').replaceAll('~', '');
        assert.deepEqual(extractHashtags('', `\`\`\`\n${safeInner}\n\`\`\``), []);
      }),
      { seed: 20261121, numRuns: 300 },
    );
  });
});

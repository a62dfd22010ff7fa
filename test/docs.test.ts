import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import GithubSlugger from 'github-slugger';
import { serverNodeFlags } from '../bench/processes.js';
import { linesOutsideCode, readLines } from '../src/shared/markdown.js';

/**
 * The repository explains itself: every rule id the code cites is defined in docs/rules.md, and
 * the links of the README and the docs, and the docs/… references in code, lead somewhere.
 */

// Tests run from the repository root (npm test runs them bundled elsewhere).
const ROOT = process.cwd();
const RULE_ID = /\bD-[A-Z]+-\d+\b/g;
const CODE_DIRS = ['src', 'test', 'bench'];

function filesUnder(dir: string, extension: string): string[] {
  return fs
    .readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(extension))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
}

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
/** A Markdown file without its fenced code, read as the notes' own Markdown reader reads it. */
const prose = (file: string) => linesOutsideCode(read(file)).join('\n');

/** The anchors a Markdown file offers: GitHub's heading slugs and explicit `<a id="…">`. */
function anchorsOf(file: string): Set<string> {
  const slugger = new GithubSlugger();
  const text = prose(file);
  const anchors = new Set<string>();
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) anchors.add(slugger.slug(heading!));
  for (const [, id] of text.matchAll(/<a id="([^"]+)"/g)) anchors.add(id!);
  return anchors;
}

/** Whether `target` (a path, maybe with #anchor) exists, read relative to the file `from`. */
function brokenLink(from: string, target: string): string | null {
  const [file, anchor] = target.split('#') as [string, string | undefined];
  const resolved = file === '' ? from : path.normalize(path.join(path.dirname(from), decodeURI(file)));
  if (!fs.existsSync(path.join(ROOT, resolved))) return `${from} → ${target}: no such file`;
  if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor))
    return `${from} → ${target}: no such anchor`;
  return null;
}

/** Relative link targets of a Markdown file: `[text](target)`, skipping URLs and code. */
function linksOf(file: string): string[] {
  const text = prose(file).replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

const DOC_FILES = ['README.md', ...filesUnder('docs', '.md')];

describe('docs define what the code cites', () => {
  it('defines every D- rule id cited in src, test and bench in docs/rules.md', () => {
    const defined = anchorsOf('docs/rules.md');
    const undefinedIds = new Set<string>();
    for (const file of CODE_DIRS.flatMap((dir) => filesUnder(dir, '.ts'))) {
      for (const [id] of read(file).matchAll(RULE_ID))
        if (!defined.has(id.toLowerCase())) undefinedIds.add(id);
    }
    assert.deepEqual([...undefinedIds].sort(), []);
  });

  it('defines every D- rule id the docs mention', () => {
    const defined = anchorsOf('docs/rules.md');
    const missing = DOC_FILES.flatMap((file) =>
      [...read(file).matchAll(RULE_ID)]
        .filter(([id]) => !defined.has(id.toLowerCase()))
        .map(([id]) => `${file}: ${id}`),
    );
    assert.deepEqual([...new Set(missing)], []);
  });

  it('resolves every relative link of the README and docs/, anchors included', () => {
    const broken = DOC_FILES.flatMap((file) => linksOf(file).map((target) => brokenLink(file, target)));
    assert.deepEqual(broken.filter(Boolean), []);
  });

  it('resolves every docs/ path the code points at, anchors included', () => {
    // docs/… as a repository path; /api/docs/… is a URL, not a file.
    const broken: string[] = [];
    for (const file of CODE_DIRS.flatMap((dir) => filesUnder(dir, '.ts'))) {
      for (const [target] of read(file).matchAll(/(?<![\w/])docs\/[\w./-]*\w(#[\w-]+)?/g)) {
        const problem = brokenLink('README.md', target);
        if (problem) broken.push(`${file}: ${problem}`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it('runs the server as npm start does wherever the docs start it (its node flags)', () => {
    const flags = serverNodeFlags(JSON.parse(read('package.json')).scripts.start);
    assert.ok(flags.length > 0, 'npm start passes node flags');
    // Every command or unit line in the docs' code that serves: ends with dist/main.js, where
    // `dist/main.js <command>` runs a command.
    const servers = DOC_FILES.flatMap((file) =>
      readLines(read(file))
        .filter(({ kind, text }) => kind === 'code' && /\bnode\b.* dist\/main\.js\s*$/.test(text))
        .map(({ text: line }) => ({ file, line })),
    );
    assert.ok(servers.length >= 3, 'the README and both units of docs/deploy.md start the server');
    for (const { file, line } of servers) assert.deepEqual(serverNodeFlags(line), flags, `${file}: ${line}`);
  });
});

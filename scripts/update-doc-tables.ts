// Rewrites the tables the docs take from the code (tests fail while they differ):
// README's configuration table and docs/api.md's error codes. Run: npm run docs:tables
import { readFileSync, writeFileSync } from 'node:fs';
import { configMarkdownTable } from '../src/config.js';
import { errorCodesMarkdownTable } from '../src/errors.js';

/** Replaces the Markdown table that starts with `header` in `file` by `table`. */
function replaceTable(file: string, table: string): void {
  const text = readFileSync(file, 'utf8');
  const header = table.slice(0, table.indexOf('\n'));
  const start = text.indexOf(header);
  if (start < 0) throw new Error(`${file} has no table starting with ${header}`);
  let end = start;
  while (end < text.length && text[end] === '|') end = text.indexOf('\n', end) + 1 || text.length;
  writeFileSync(file, `${text.slice(0, start)}${table}\n${text.slice(end)}`);
}

replaceTable('README.md', configMarkdownTable());
replaceTable('docs/api.md', errorCodesMarkdownTable());

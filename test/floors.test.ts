/**
 * The floors of src/ (README "Code is organised in floors"; docs/decisions/0032-model-floor.md):
 * imports point down, never up, never in a circle. The web app's sync engine (web/src/sync/,
 * docs/decisions/0014-client-sync-engine.md) has no circles either.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

/**
 * Every file of `root` (relative, with `/`) and the files it imports, type-only included
 * (outside `root`: `../`).
 */
function importGraph(root: string): Map<string, string[]> {
  const dir = path.resolve(root);
  const graph = new Map<string, string[]>();
  for (const file of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts')) continue;
    const source = fs.readFileSync(path.join(dir, file), 'utf8');
    const targets = [
      ...source.matchAll(/^\s*(?:import|export)\b[^'"]*from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/gm),
    ]
      .map(([, from, dynamic]) =>
        path.resolve(dir, path.dirname(file), (from ?? dynamic)!).replace(/\.js$/, '.ts'),
      )
      .map((target) => path.relative(dir, target).split(path.sep).join('/'));
    graph.set(file.split(path.sep).join('/'), targets);
  }
  return graph;
}

/** Fails with the first circle of imports in `graph`. */
function assertNoCircles(graph: Map<string, string[]>) {
  const done = new Set<string>();
  const visit = (file: string, trail: string[]) => {
    const loop = trail.indexOf(file);
    assert.equal(loop, -1, `circle: ${[...trail.slice(loop), file].join(' -> ')}`);
    if (done.has(file)) return;
    for (const target of graph.get(file) ?? []) visit(target, [...trail, file]);
    done.add(file);
  };
  for (const file of graph.keys()) visit(file, []);
}

const graph = importGraph('src');
const importsOf = (folder: RegExp) => [...graph].filter(([file]) => folder.test(file));

describe('the floors of src/', () => {
  it('model/ imports no feature, http, cli or app.ts', () => {
    for (const [file, targets] of importsOf(/^model\//))
      for (const target of targets)
        assert.doesNotMatch(target, /^(features|http|cli)\/|^app\.ts$/, `${file} imports ${target}`);
  });

  it('db/ and http/ import no feature, model, cli or app.ts', () => {
    for (const [file, targets] of importsOf(/^(db|http)\//))
      for (const target of targets)
        assert.doesNotMatch(target, /^(features|model|cli)\/|^app\.ts$/, `${file} imports ${target}`);
  });

  it("no feature imports another feature's store.ts", () => {
    for (const [file, targets] of importsOf(/^features\//)) {
      const own = file.split('/')[1];
      for (const target of targets) {
        const [, feature] = /^features\/([^/]+)\/store\.ts$/.exec(target) ?? [];
        assert.ok(feature === undefined || feature === own, `${file} imports ${target}`);
      }
    }
  });

  it('no file imports itself through others (no circles)', () => {
    assertNoCircles(graph);
  });
});

describe("the web app's sync engine", () => {
  it('has no circles of imports', () => {
    assertNoCircles(importGraph('web/src/sync'));
  });
});

import fs from 'node:fs';
import os from 'node:os';
import type { LoadResult } from './load.js';
import type { Scenario, Target } from './scenarios.js';

export interface ScenarioRow {
  scenario: Scenario;
  result: LoadResult;
  ceiling?: LoadResult;
}

export interface ProcessRow {
  name: string;
  value: number;
  unit: 'ms' | 'MiB';
  max?: number;
}

export interface RunInfo {
  date: Date;
  corpora: string[];
  notes: string[];
}

export const number = (value: number, digits = 0) =>
  value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function size(bytes: number): string {
  if (bytes >= 1_000_000) return `${number(bytes / 1_000_000, 1)} MB`;
  if (bytes >= 1_000) return `${number(bytes / 1_000, 1)} kB`;
  return `${number(bytes)} B`;
}

function targetText(target: Target | undefined): string {
  if (!target) return '—';
  if (target.kind === 'ceiling') return `≥ ${target.minRatio * 100}% of ceiling`;
  return `${target.percentile} < ${target.maxMs} ms`;
}

function meetsTarget(row: ScenarioRow): boolean | undefined {
  const { target } = row.scenario;
  if (!target) return undefined;
  if (row.result.requests === 0) return false;
  if (target.kind === 'ceiling')
    return row.ceiling ? row.result.rps / row.ceiling.rps >= target.minRatio : false;
  return row.result[target.percentile] < target.maxMs;
}

const verdict = (pass: boolean | undefined) => (pass === undefined ? '—' : pass ? 'pass' : '**miss**');

export function scenarioTable(rows: ScenarioRow[]): string {
  const lines = [
    '| Scenario | Corpus | Conn. | Req/s | p50 ms | p99 ms | Response | Ceiling req/s | Ratio | Target | Result |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|---|---|',
  ];
  for (const row of rows) {
    const { scenario, result, ceiling } = row;
    const failed = result.failures.length > 0 ? ` (${result.failures.join(', ')})` : '';
    lines.push(
      `| ${scenario.name}${failed} | ${scenario.corpus} | ${scenario.connections} | ${number(result.rps)} | ${number(result.p50)} | ${number(result.p99)} | ${size(result.bytesPerResponse)} | ${ceiling ? number(ceiling.rps) : '—'} | ${ceiling ? `${number((100 * result.rps) / ceiling.rps)}%` : '—'} | ${targetText(scenario.target)} | ${verdict(meetsTarget(row))} |`,
    );
  }
  return lines.join('\n');
}

export function processTable(rows: ProcessRow[]): string {
  const lines = ['| Measure | Value | Target | Result |', '|---|--:|---|---|'];
  for (const row of rows) {
    const target = row.max === undefined ? '—' : `< ${number(row.max)} ${row.unit}`;
    const pass = row.max === undefined ? undefined : row.value < row.max;
    lines.push(`| ${row.name} | ${number(row.value)} ${row.unit} | ${target} | ${verdict(pass)} |`);
  }
  return lines.join('\n');
}

export function machineLine(date: Date): string {
  const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
  return `${cpu}, ${os.availableParallelism()} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}, ${os.type()} ${os.release()}; ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function resultsSection(info: RunInfo, scenarios: ScenarioRow[], processes: ProcessRow[]): string {
  return [
    `Machine: ${machineLine(info.date)}.`,
    '',
    `Corpora: ${info.corpora.join('; ')}.`,
    '',
    scenarioTable(scenarios),
    '',
    processTable(processes),
    ...(info.notes.length > 0 ? ['', ...info.notes.map((n) => `- ${n}`)] : []),
  ].join('\n');
}

/**
 * Replaces a generated part of docs/benchmarks.md (between `<!-- {part}:start -->` and
 * `<!-- {part}:end -->`), keeping the hand-written findings around it.
 */
export function writeResults(file: string, section: string, part = 'results'): void {
  const [START, END] = [`<!-- ${part}:start -->`, `<!-- ${part}:end -->`];
  const existing = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : `# Benchmarks\n\n${START}\n${END}\n`;
  const start = existing.indexOf(START);
  const end = existing.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${file} lacks the ${START} … ${END} markers`);
  fs.writeFileSync(file, `${existing.slice(0, start + START.length)}\n${section}\n${existing.slice(end)}`);
}

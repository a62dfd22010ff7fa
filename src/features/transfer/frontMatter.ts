import { parse, stringify } from 'yaml';

/** `---` first line, YAML, `---` line; the rest is the Markdown body. */
const FRONT_MATTER = /^---\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)/;

/**
 * Splits a Markdown file into its YAML front matter (an empty object when there is none) and its
 * body. Throws on front matter that is not a YAML mapping. The `yaml` library parses with the
 * YAML 1.2 core schema (dates stay strings) and caps alias expansion (no "billion laughs").
 */
export function splitFrontMatter(text: string): { data: Record<string, unknown>; body: string } {
  const match = FRONT_MATTER.exec(text);
  if (!match) return { data: {}, body: text };
  const data = match[1] ? (parse(match[1]) as unknown) : {};
  if (data === null || data === undefined) return { data: {}, body: text.slice(match[0].length) };
  if (typeof data !== 'object' || Array.isArray(data))
    throw new Error('the front matter is not a YAML mapping');
  return { data: data as Record<string, unknown>, body: text.slice(match[0].length) };
}

export function withFrontMatter(data: Record<string, unknown>, body: string): string {
  return `---\n${stringify(data, { lineWidth: 0 })}---\n${body}`;
}

/** The MCP configurations the settings page offers are the ones docs/mcp.md documents. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { mcpConfigs } from '../web/src/model/mcpConfig.js';

const DOC = fs.readFileSync('docs/mcp.md', 'utf8');
/** The first fenced block of `language` after `heading` in docs/mcp.md. */
function documented(heading: string, language: string): string {
  const section = DOC.slice(DOC.indexOf(`### ${heading}`));
  const match = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(section);
  assert.ok(match, `docs/mcp.md has a ${language} block under ${heading}`);
  return match[1]!.trim();
}

describe('MCP configuration for the settings page', () => {
  const configs = Object.fromEntries(
    mcpConfigs('https://notes.example.com', 'nsk_…').map((config) => [config.client, config.text]),
  );

  it('Claude Code, Cursor and Claude Desktop are exactly as documented', () => {
    assert.equal(configs['Claude Code'], documented('Claude Code', 'sh'));
    assert.deepEqual(JSON.parse(configs.Cursor!), JSON.parse(documented('Cursor', 'json')));
    assert.deepEqual(
      JSON.parse(configs['Claude Desktop']!),
      JSON.parse(documented('Claude Desktop', 'json')),
    );
  });

  it('adds --allow-http for plain http to another machine only', () => {
    const args = (origin: string) =>
      JSON.parse(mcpConfigs(origin, 'k').find((config) => config.client === 'Claude Desktop')!.text)
        .mcpServers.notes.args as string[];
    assert.ok(args('http://notes.lan:3000').includes('--allow-http'));
    assert.ok(!args('http://127.0.0.1:3000').includes('--allow-http'));
    assert.ok(!args('https://notes.example.com').includes('--allow-http'));
  });
});

/**
 * The ready-to-paste MCP configurations of docs/mcp.md "Connect a client", for this server's
 * address and a key. Kept to the documented shapes: test/web-model.test.ts compares them.
 */
interface McpConfig {
  client: 'Claude Code' | 'Claude Desktop' | 'Cursor';
  where: string;
  text: string;
}

export function mcpConfigs(origin: string, key: string): McpConfig[] {
  const endpoint = `${origin}/api/mcp`;
  const bridgeArgs = [
    '-y',
    'mcp-remote',
    endpoint,
    '--transport',
    'http-only',
    '--header',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: mcp-remote itself expands it from `env`
    'Authorization:${NOTES_AUTH}',
  ];
  // mcp-remote refuses plain http except to localhost unless told (docs/mcp.md).
  const url = new URL(origin);
  const localhost = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol === 'http:' && !localhost) bridgeArgs.push('--allow-http');
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  return [
    {
      client: 'Claude Code',
      where: 'Run in a terminal (add --scope user to have it in every project):',
      text: `claude mcp add --transport http notes ${endpoint} \\\n  --header "Authorization: Bearer ${key}"`,
    },
    {
      client: 'Claude Desktop',
      where: 'claude_desktop_config.json (Settings → Developer → Edit Config), then restart the app:',
      text: json({
        mcpServers: {
          notes: { command: 'npx', args: bridgeArgs, env: { NOTES_AUTH: `Bearer ${key}` } },
        },
      }),
    },
    {
      client: 'Cursor',
      where: '~/.cursor/mcp.json (all projects) or .cursor/mcp.json (one project):',
      text: json({ mcpServers: { notes: { url: endpoint, headers: { Authorization: `Bearer ${key}` } } } }),
    },
  ];
}

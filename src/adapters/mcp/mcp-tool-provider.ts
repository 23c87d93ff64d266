/**
 * ToolProvider over an MCP server (`@modelcontextprotocol/sdk`), reached over stdio (a
 * command) or Streamable HTTP. The SDK's types stop here; policy is the engine's.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ToolCallOptions, ToolCallResult, ToolInfo, ToolProvider } from '../../ports/tools.js';

export interface McpServerOptions {
  name: string;
  access: 'read' | 'write';
  transport: 'stdio' | 'http';
  command?: string;
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
  cwd?: string;
  url?: string;
  headers?: Readonly<Record<string, string>>;
  /** Timeout of connect and list, ms. */
  connectTimeoutMs?: number;
}

/** Text content joined; anything else named, so the model knows it was there. */
function resultText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((c: { type?: string; text?: string; mimeType?: string; resource?: { uri?: string; text?: string } }) => {
      if (c.type === 'text') return c.text ?? '';
      if (c.type === 'resource') return c.resource?.text ?? `[resource ${c.resource?.uri ?? ''}]`;
      return `[${c.type ?? 'unknown'} content${c.mimeType ? ` ${c.mimeType}` : ''} omitted]`;
    })
    .join('\n');
}

function transportFor(o: McpServerOptions): Transport {
  if (o.transport === 'http') {
    if (!o.url) throw new Error(`MCP server ${o.name}: transport http needs a url`);
    return new StreamableHTTPClientTransport(new URL(o.url), { requestInit: { headers: { ...(o.headers ?? {}) } } });
  }
  if (!o.command) throw new Error(`MCP server ${o.name}: transport stdio needs a command`);
  return new StdioClientTransport({
    command: o.command,
    args: [...(o.args ?? [])],
    env: { ...getDefaultEnvironment(), ...(o.env ?? {}) },
    ...(o.cwd ? { cwd: o.cwd } : {}),
    stderr: 'ignore',
  });
}

/** Connects to one MCP server over the configured transport. Rejects when it cannot be reached. */
export async function connectMcpServer(o: McpServerOptions): Promise<ToolProvider> {
  return connectMcpTransport(transportFor(o), o);
}

/** Connects over a given transport (tests pass one half of an in-memory linked pair). */
export async function connectMcpTransport(transport: Transport, o: Pick<McpServerOptions, 'name' | 'access' | 'connectTimeoutMs'>): Promise<ToolProvider> {
  const client = new Client({ name: 'reprise', version: '0.1.0' });
  await client.connect(transport, { timeout: o.connectTimeoutMs ?? 10_000 });
  return {
    server: o.name,
    access: o.access,
    async listTools(): Promise<ToolInfo[]> {
      const out: ToolInfo[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout: o.connectTimeoutMs ?? 10_000 });
        for (const t of page.tools) {
          out.push({
            name: t.name,
            description: t.description ?? t.title ?? t.name,
            inputSchema: t.inputSchema as Record<string, unknown>,
            ...(typeof t.annotations?.readOnlyHint === 'boolean' ? { readOnlyHint: t.annotations.readOnlyHint } : {}),
          });
        }
        cursor = page.nextCursor;
      } while (cursor);
      return out;
    },
    async callTool(name: string, args: Record<string, unknown>, opts: ToolCallOptions): Promise<ToolCallResult> {
      const res = await client.callTool({ name, arguments: args }, undefined, { signal: opts.signal, timeout: opts.timeoutMs });
      if ('toolResult' in res && !('content' in res)) return { text: JSON.stringify(res.toolResult), isError: false };
      return { text: resultText(res.content), isError: res.isError === true };
    },
    async close(): Promise<void> {
      await client.close();
    },
  };
}

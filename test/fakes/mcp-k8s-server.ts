/**
 * A real MCP server of our own for tests: pod status, events and logs of a fake cluster read
 * from a fixture file, plus tools that misbehave on purpose (slow, oversized, a write tool).
 * Served over Streamable HTTP in-process ({@link startK8sHttpServer}) or over stdio when run
 * as a program: `node test/fakes/mcp-k8s-server.ts FIXTURES.json` (Node strips the types).
 * Self-contained (no relative imports) so Node can run it without a build.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface K8sFixtures {
  pods: Record<string, unknown[]>;
  events: Record<string, unknown[]>;
  logs: Record<string, string>;
}

/** Tool calls the server received, for tests that assert on what was asked. */
export interface ReceivedCall {
  tool: string;
  args: Record<string, unknown>;
}

const text = (v: unknown) => ({ content: [{ type: 'text' as const, text: typeof v === 'string' ? v : JSON.stringify(v, null, 1) }] });

export function createK8sMcpServer(fx: K8sFixtures, received: ReceivedCall[] = [], opts: { slowMs?: number } = {}): McpServer {
  const server = new McpServer({ name: 'fake-k8s', version: '1.0.0' });
  const ro = { readOnlyHint: true };
  const log = (tool: string, args: Record<string, unknown>): void => void received.push({ tool, args });
  server.registerTool(
    'pod_status',
    {
      description: 'Pods of a namespace with phase, readiness, restarts and last termination.',
      inputSchema: { namespace: z.string(), cluster: z.string().optional() },
      annotations: ro,
    },
    async (args) => {
      log('pod_status', args);
      return text(fx.pods[args.namespace] ?? []);
    },
  );
  server.registerTool(
    'events',
    { description: 'Recent events of a namespace.', inputSchema: { namespace: z.string(), cluster: z.string().optional() }, annotations: ro },
    async (args) => {
      log('events', args);
      return text(fx.events[args.namespace] ?? []);
    },
  );
  server.registerTool(
    'logs',
    { description: 'Recent log lines of one pod.', inputSchema: { namespace: z.string(), pod: z.string() }, annotations: ro },
    async (args) => {
      log('logs', args);
      const l = fx.logs[`${args.namespace}/${args.pod}`];
      return l === undefined ? { ...text(`no pod ${args.pod} in ${args.namespace}`), isError: true } : text(l);
    },
  );
  server.registerTool(
    'slow_probe',
    { description: 'A probe that takes its time.', inputSchema: { namespace: z.string() }, annotations: ro },
    async (args, extra) => {
      log('slow_probe', args);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, opts.slowMs ?? 5000);
        extra.signal.addEventListener('abort', () => {
          clearTimeout(t);
          resolve();
        });
      });
      return text('probe finished');
    },
  );
  server.registerTool('big_dump', { description: 'Dumps a lot of state.', inputSchema: { namespace: z.string() }, annotations: ro }, async (args) => {
    log('big_dump', args);
    return text(`${'x'.repeat(40 * 1024)}END`);
  });
  server.registerTool(
    'delete_pod',
    { description: 'Deletes a pod.', inputSchema: { namespace: z.string(), pod: z.string() }, annotations: { readOnlyHint: false, destructiveHint: true } },
    async (args) => {
      log('delete_pod', args);
      return text('deleted');
    },
  );
  return server;
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(raw ? JSON.parse(raw) : undefined);
      } catch (err) {
        reject(err);
      }
    });
    req.on('error', reject);
  });
}

/** Streamable HTTP (stateless: a fresh server per request) on 127.0.0.1, port 0. */
export async function startK8sHttpServer(
  fx: K8sFixtures,
  opts: { slowMs?: number } = {},
): Promise<{ url: string; received: ReceivedCall[]; close: () => Promise<void> }> {
  const received: ReceivedCall[] = [];
  const http: Server = createServer(async (req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const server = createK8sMcpServer(fx, received, opts);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, await readJson(req));
    } catch {
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const addr = http.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node mcp-k8s-server.ts FIXTURES.json\n');
    process.exit(2);
  }
  const fx = JSON.parse(readFileSync(file, 'utf8')) as K8sFixtures;
  const slowMs = Number(process.env['FAKE_SLOW_MS'] ?? 5000);
  await createK8sMcpServer(fx, [], { slowMs }).connect(new StdioServerTransport());
}

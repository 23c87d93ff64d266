import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { connectMcpTransport } from '../../../src/adapters/mcp/mcp-tool-provider.js';
import { createK8sMcpServer, type K8sFixtures } from '../../fakes/mcp-k8s-server.js';

const fixtures = JSON.parse(readFileSync(fileURLToPath(new URL('../../fakes/fixtures/k8s-state.json', import.meta.url)), 'utf8')) as K8sFixtures;

describe('MCP tool provider', () => {
  it('lists tools with their readOnlyHint and calls them, over an in-memory linked pair', async () => {
    const [client, server] = InMemoryTransport.createLinkedPair();
    await createK8sMcpServer(fixtures).connect(server);
    const p = await connectMcpTransport(client, { name: 'k8s', access: 'read' });
    const tools = await p.listTools();
    expect(tools.find((t) => t.name === 'delete_pod')?.readOnlyHint).toBe(false);
    expect(tools.find((t) => t.name === 'pod_status')).toMatchObject({ readOnlyHint: true, inputSchema: { type: 'object', required: ['namespace'] } });
    const ok = await p.callTool('pod_status', { namespace: 'payments' }, { signal: new AbortController().signal, timeoutMs: 1000 });
    expect(ok.isError).toBe(false);
    expect(ok.text).toContain('OOMKilled');
    const err = await p.callTool('logs', { namespace: 'payments', pod: 'nope' }, { signal: new AbortController().signal, timeoutMs: 1000 });
    expect(err).toEqual({ text: 'no pod nope in payments', isError: true });
    await p.close();
  });
});

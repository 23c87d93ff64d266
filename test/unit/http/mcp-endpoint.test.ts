/**
 * The MCP HTTP endpoint in-process (`app.request()`): bearer token, loopback Host/Origin
 * checks, body limit and methods, before any MCP server is involved.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { describe, expect, it } from 'vitest';
import { createMcpHttpServer, isLoopbackHost } from '../../../src/http/mcp-endpoint.js';
import { parseListen } from '../../../src/cli/mcp.js';
import { silentLogger } from '../../../src/ports/logger.js';

const TOKEN = 'unit-token-0123456789';
const init = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'u', version: '1' } },
});
const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', host: '127.0.0.1:1' };

function app(opts: { token?: string; names?: string[]; limit?: number } = {}) {
  let built = 0;
  const http = createMcpHttpServer({
    createServer: () => {
      built++;
      return new McpServer({ name: 't', version: '1' });
    },
    ...(opts.token ? { token: opts.token } : {}),
    bodyLimitBytes: opts.limit ?? 1024,
    ...(opts.names ? { hosts: { names: opts.names } } : {}),
    logger: silentLogger,
  });
  return { app: http.app, built: () => built };
}

describe('MCP HTTP endpoint', () => {
  it('needs the bearer token when one is set, before building a server', async () => {
    const a = app({ token: TOKEN, names: ['mcp.example.com'] });
    const post = (headers: Record<string, string>) => a.app.request('/mcp', { method: 'POST', headers: { ...json, ...headers }, body: init });
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: 'Bearer nope' })).status).toBe(401);
    expect((await post({ authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
    expect((await post({ authorization: TOKEN })).status).toBe(401);
    expect(a.built()).toBe(0);
    const ok = await post({ authorization: `Bearer ${TOKEN}`, host: 'mcp.example.com' });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ result: { serverInfo: { name: 't' } } });
    expect(a.built()).toBe(1);
  });

  it('without a token on loopback, refuses a foreign Host or Origin', async () => {
    const a = app();
    const post = (headers: Record<string, string>) => a.app.request('/mcp', { method: 'POST', headers: { ...json, ...headers }, body: init });
    expect((await post({ host: 'evil.example:8080' })).status).toBe(403);
    expect((await post({ origin: 'http://evil.example' })).status).toBe(403);
    expect((await post({ host: 'localhost:9', origin: 'http://localhost:3000' })).status).toBe(200);
    expect((await post({ host: '[::1]:9' })).status).toBe(200);
    // Sandboxed frames send `Origin: null`; other sites' pages say cross-site.
    expect((await post({ origin: 'null' })).status).toBe(403);
    expect((await post({ 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await post({ host: 'localhost.evil.example' })).status).toBe(403);
  });

  it('with a token, still refuses a Host it was not told it answers to', async () => {
    const a = app({ token: TOKEN, names: ['mcp.example.com'] });
    const post = (headers: Record<string, string>) =>
      a.app.request('/mcp', { method: 'POST', headers: { ...json, authorization: `Bearer ${TOKEN}`, ...headers }, body: init });
    expect((await post({ host: 'evil.example' })).status).toBe(403);
    expect((await post({ host: 'mcp.example.com.evil.example' })).status).toBe(403);
    expect((await post({ host: 'mcp.example.com:8765', origin: 'https://evil.example' })).status).toBe(403);
    expect((await post({ host: 'MCP.Example.com:8765' })).status).toBe(200);
    expect(a.built()).toBe(1);
  });

  it('answers 413 over the body limit, 405 to other methods, a JSON-RPC error to garbage', async () => {
    const a = app({ limit: 100 });
    const big = await a.app.request('/mcp', { method: 'POST', headers: { ...json, 'content-length': '5000' }, body: 'x'.repeat(5000) });
    expect(big.status).toBe(413);
    expect((await a.app.request('/mcp', { method: 'GET', headers: json })).status).toBe(405);
    expect((await a.app.request('/mcp', { method: 'DELETE', headers: json })).status).toBe(405);
    const bad = await a.app.request('/mcp', { method: 'POST', headers: json, body: '{"jsonrpc":' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: -32700 } });
    const notRpc = await a.app.request('/mcp', { method: 'POST', headers: json, body: '{"hello":"world"}' });
    expect(notRpc.status).toBe(400);
    expect(await notRpc.json()).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
  });

  it('knows loopback hosts and parses --http', () => {
    for (const h of ['127.0.0.1', 'localhost', '::1', '[::1]', '127.3.2.1']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '127.0.0.1.example.com', '']) expect(isLoopbackHost(h), h).toBe(false);
    expect(parseListen('8765')).toEqual({ host: '127.0.0.1', port: 8765 });
    expect(parseListen('0.0.0.0:80')).toEqual({ host: '0.0.0.0', port: 80 });
    expect(parseListen('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(parseListen('localhost:65535')).toEqual({ host: 'localhost', port: 65535 });
    for (const v of ['', 'abc', '99999', 'host:', ':', 'h:1:2x', '1.2.3.4:-1']) expect(parseListen(v), v).toBeUndefined();
  });
});

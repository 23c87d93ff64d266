/**
 * `reprise mcp` (issue 7 item 5): an MCP client from the SDK lists and calls the four tools
 * over stdio and over Streamable HTTP, against the bundled catalog and a ledger with known
 * events. The recall answer must be the one `reprise recall --json` gives on the same store,
 * the track record the counts of the events written. Hostile input gets protocol or tool
 * errors, the HTTP endpoint refuses missing/wrong tokens and oversized bodies, and the store
 * is byte-for-byte what it was: the server never writes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore } from '../../src/adapters/keyv/keyv-store.js';
import type { LedgerEvent } from '../../src/core/ledger-events.js';
import { Ledger } from '../../src/core/ledger/ledger.js';
import { git, incidentEntry, makeGitRemote } from '../helpers/git-remote.js';
import { CHECKOUT_ENTRY, crashLoopPayload, request, requestOversize } from './helpers/alerts.js';
import { recallJson } from './helpers/recall-cli.js';
import { assertBuilt, childEnv, cleanup, MAIN_JS, makeTmpDir, REPO_ROOT, runCli } from './helpers/spawn-bot.js';
import { waitFor } from '../helpers/wait-for.js';

const CATALOG = join(REPO_ROOT, 'catalog');
const TRIGGER = 'kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1';
const CORE_DNS = 'kubepodcrashlooping|kube-system|deployment|coredns|';
const TOKEN = 'test-token-0123456789abcdef';
const RUNBOOK = 'kubernetes/KubePodCrashLooping.md';

let dataDir: string;
let storeFile: string;
let storeUrl: string;
let written: number;
const children = new Set<ChildProcess>();

/** The crash-loop alert the starter catalog's checkout incident answers. */
const alert = crashLoopPayload({ status: 'firing' });
const alertLabels = (alert['alerts'] as Array<{ labels: Record<string, string>; annotations: Record<string, string> }>)[0]!;

function minutesAgo(m: number): string {
  return new Date(Date.now() - m * 60_000).toISOString();
}

/**
 * The checkout entry recalled three times: two resolved, one still in progress; one 👍 and
 * one confirmation. Another entry gets a 👎 so numbers cannot leak between entries.
 */
function seedEvents(): LedgerEvent[] {
  const open = (fp: string, at: string, entry = CHECKOUT_ENTRY, triggerKey = TRIGGER): LedgerEvent => ({
    type: 'open',
    id: `open-${fp}`,
    fingerprint: fp,
    triggerKey,
    kind: 'recall',
    entry,
    answerKind: 'incident',
    dupFingerprint: `dup-${fp}`,
    verdict: 'action_required',
    resolvable: true,
    at,
  });
  return [
    open('fp-1', minutesAgo(300)),
    { type: 'resolve', fingerprint: 'fp-1', triggerKey: TRIGGER, at: minutesAgo(290) },
    open('fp-2', minutesAgo(200)),
    { type: 'resolve', fingerprint: 'fp-2', triggerKey: TRIGGER, at: '2026-11-30T10:00:00.000Z' },
    { type: 'feedback', triggerKey: TRIGGER, user: 'alice', vote: 'up', openId: 'open-fp-2', via: 'cli', at: minutesAgo(150) },
    { type: 'confirm', entry: CHECKOUT_ENTRY, dupFingerprint: 'dup-fp-2', at: minutesAgo(140) },
    open('fp-3', minutesAgo(5)),
    open('fp-other', minutesAgo(100), 'incidents/coredns-loop-plugin-crashloop.md', CORE_DNS),
    { type: 'feedback', triggerKey: CORE_DNS, user: 'bob', vote: 'down', via: 'cli', at: minutesAgo(90) },
  ] as LedgerEvent[];
}

async function seedLedger(events: LedgerEvent[]): Promise<number> {
  const store = createStore(storeUrl, dataDir);
  try {
    const ledger = await Ledger.open(store, { snapshotEvery: 0 });
    for (const e of events) await ledger.append(e);
    return ledger.seq;
  } finally {
    await store.close();
  }
}

/** What the store holds, as bytes: the main file, and any WAL content not yet checkpointed. */
function storeDigest(): string {
  const h = createHash('sha256').update(readFileSync(storeFile));
  const wal = `${storeFile}-wal`;
  if (existsSync(wal) && statSync(wal).size > 0) h.update(readFileSync(wal));
  return h.digest('hex');
}

async function ledgerSeq(): Promise<number> {
  const store = createStore(storeUrl, dataDir, { readOnly: true });
  try {
    return (await Ledger.open(store)).seq;
  } finally {
    await store.close();
  }
}

interface HttpMcp {
  url: string;
  child: ChildProcess;
  stderr: () => string;
}

/** `reprise mcp --http HOST:0 …`, resolved once it logged the port it listens on. */
async function spawnHttp(args: string[], env: Record<string, string> = {}): Promise<HttpMcp> {
  assertBuilt();
  const child = spawn(process.execPath, [MAIN_JS, 'mcp', '--http', '127.0.0.1:0', ...args], {
    cwd: REPO_ROOT,
    env: childEnv({ REPRISE_DATA_DIR: dataDir, REPRISE_LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  child.stdout!.resume();
  const port = await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`reprise mcp exited ${child.exitCode}:\n${err}`);
      const m = /"port":(\d+),"path":"\/mcp".*listening on/.exec(err);
      return m ? Number(m[1]) : undefined;
    },
    { what: 'reprise mcp to listen', timeoutMs: 20_000 },
  );
  return { url: `http://127.0.0.1:${port}/mcp`, child, stderr: () => err };
}

async function stopChild(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const done = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  const code = await done;
  children.delete(child);
  return code;
}

const structured = (r: unknown) => (r as CallToolResult).structuredContent as Record<string, unknown>;
const textOf = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;

/** Lists and calls the four tools, asserting real values. Returns the recall report. */
async function exerciseTools(client: Client): Promise<Record<string, unknown>> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(['kb_get', 'kb_search', 'recall', 'track_record']);
  for (const t of tools) expect(t.annotations?.readOnlyHint, t.name).toBe(true);
  expect(tools.find((t) => t.name === 'kb_search')!.inputSchema.required).toEqual(['query']);

  const search = await client.callTool({ name: 'kb_search', arguments: { query: 'checkout-api crashlooping OOMKilled', limit: 3 } });
  expect(search.isError).toBeFalsy();
  const results = structured(search)['results'] as Array<{ id: string; title: string; kind: string; score: number }>;
  expect(results.length).toBeGreaterThan(0);
  expect(results.length).toBeLessThanOrEqual(3);
  expect(results[0]).toMatchObject({ id: CHECKOUT_ENTRY, kind: 'Incident' });
  expect(results[0]!.score).toBeGreaterThan(0);
  for (let i = 1; i < results.length; i++) expect(results[i]!.score).toBeLessThanOrEqual(results[i - 1]!.score);
  expect(textOf(search)).toContain(CHECKOUT_ENTRY);

  const get = await client.callTool({ name: 'kb_get', arguments: { id: CHECKOUT_ENTRY } });
  expect(get.isError).toBeFalsy();
  const entry = structured(get);
  const file = readFileSync(join(CATALOG, CHECKOUT_ENTRY), 'utf8');
  expect(entry).toMatchObject({ id: CHECKOUT_ENTRY, type: 'Incident', status: 'active' });
  expect(file).toContain(`title: ${String(entry['title'])}`);
  expect(entry['body']).toContain('## Resolution');
  expect(file).toContain(String(entry['body']).trim().split('\n')[0]);

  const rec = await client.callTool({ name: 'recall', arguments: { labels: alertLabels.labels, annotations: alertLabels.annotations } });
  expect(rec.isError, textOf(rec)).toBeFalsy();
  const report = structured(rec);
  expect(report['answer']).toMatchObject({ kind: 'incident', entry: CHECKOUT_ENTRY });
  expect(textOf(rec)).toContain(`instant recall ${CHECKOUT_ENTRY}`);

  const track = await client.callTool({ name: 'track_record', arguments: { entry: CHECKOUT_ENTRY } });
  expect(track.isError).toBeFalsy();
  // Three recall opens: two resolved, one in progress; one 👍 (on fp-2's thread), one confirmation.
  expect(structured(track)).toMatchObject({
    entry: CHECKOUT_ENTRY,
    inCatalog: true,
    kind: 'incident',
    recalls: 3,
    resolved: 2,
    failed: 0,
    inFlight: 1,
    up: 1,
    down: 0,
    confirmations: 1,
    lastResolved: '2026-11-30T10:00:00.000Z',
    withheld: false,
    outcomeFloor: 0.5,
    passesOutcomeGate: true,
  });
  // rate = (resolved + up + 1) / (resolved + failed + up + down + 2) = 4/5
  expect(structured(track)['rate']).toBe(0.8);
  const other = await client.callTool({ name: 'track_record', arguments: { entry: 'incidents/coredns-loop-plugin-crashloop.md' } });
  expect(structured(other)).toMatchObject({ recalls: 1, resolved: 0, inFlight: 1, up: 0, down: 1 });
  const never = await client.callTool({ name: 'track_record', arguments: { entry: RUNBOOK } });
  expect(never.isError).toBeFalsy();
  expect(structured(never)).toMatchObject({
    entry: RUNBOOK,
    kind: 'runbook',
    recalls: 0,
    resolved: 0,
    up: 0,
    down: 0,
    confirmations: 0,
    lastResolved: null,
    withheld: true,
    passesOutcomeGate: true,
  });
  return report;
}

/** Bad input of every kind: each a tool error naming the problem, the server still answering after. */
async function exerciseHostile(client: Client): Promise<void> {
  const calls: Array<[string, Record<string, unknown>, RegExp]> = [
    ['kb_get', { id: 'incidents/no-such-entry.md' }, /no catalog entry with id "incidents\/no-such-entry\.md"/],
    ['kb_get', { id: '../package.json' }, /not a catalog entry id/],
    ['kb_get', { id: '/etc/passwd' }, /not a catalog entry id/],
    ['kb_get', { id: 'incidents/../../package.json' }, /not a catalog entry id/],
    ['no_such_tool', {}, /no_such_tool not found/],
    ['kb_search', { query: 42 }, /Input validation error/],
    ['kb_search', { query: 'x'.repeat(5000) }, /Input validation error/],
    ['kb_search', { query: 'oom', limit: 1000 }, /Input validation error/],
    ['kb_get', { id: 'a'.repeat(100_000) }, /Input validation error/],
    ['recall', { labels: { namespace: 'payments' } }, /alertname/],
    ['recall', { labels: { alertname: 'X', big: 'v'.repeat(20_000) } }, /Input validation error/],
    ['recall', { labels: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`l${i}`, 'v'])) }, /Input validation error/],
    ['recall', { labels: 'KubePodCrashLooping' }, /Input validation error/],
    ['track_record', { entry: ['a'] }, /Input validation error/],
  ];
  for (const [name, args, message] of calls) {
    const r = await client.callTool({ name, arguments: args });
    expect(r.isError, `${name} ${JSON.stringify(args).slice(0, 80)}`).toBe(true);
    expect(textOf(r)).toMatch(message);
  }
  // Still serving.
  const ok = await client.callTool({ name: 'kb_get', arguments: { id: RUNBOOK } });
  expect(structured(ok)['id']).toBe(RUNBOOK);
}

beforeAll(async () => {
  assertBuilt();
  dataDir = makeTmpDir('reprise-mcp-');
  storeFile = join(dataDir, 'reprise.sqlite');
  storeUrl = `sqlite://${storeFile}`;
  written = await seedLedger(seedEvents());
});

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await cleanup();
});

describe('reprise mcp', () => {
  it('serves the four tools over stdio, agrees with `reprise recall --json`, survives bad input and writes nothing', { timeout: 60_000 }, async () => {
    expect(written).toBe(9);
    const [cli] = await recallJson(alert, { catalog: CATALOG, store: storeUrl, dir: dataDir, name: 'crashloop' });
    const before = storeDigest();

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN_JS, 'mcp', '--catalog', CATALOG],
      cwd: REPO_ROOT,
      env: childEnv({ REPRISE_DATA_DIR: dataDir }) as Record<string, string>,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const client = new Client({ name: 'mcp-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const report = await exerciseTools(client);
      // The same decision as the CLI: answer, near miss, ranking and every gate step.
      expect(report['triggerKey']).toBe(cli!.triggerKey);
      expect(report['answer']).toEqual(cli!.answer);
      expect(report['nearMiss']).toEqual(cli!.nearMiss);
      expect(report['trace']).toEqual(cli!.trace);
      expect(report['ledgerSeq']).toBe(written);
      expect((report['trace'] as Array<{ gate: string; passed: boolean; reason: string }>).find((t) => t.gate === 'outcome')?.reason).toContain(
        'rate (resolved 2 + 👍 1 + 1)/(resolved 2 + failed 0 + 👍 1 + 👎 0 + 2) = 0.8',
      );
      await exerciseHostile(client);
    } finally {
      await client.close();
    }
    // Logs went to stderr (stdout carried only the protocol, or the client would have failed).
    expect(stderr).toContain('ledger opened read-only');
    expect(storeDigest()).toBe(before);
    expect(await ledgerSeq()).toBe(written);
  });

  it('a malformed line on stdio is logged and skipped; the session goes on', { timeout: 30_000 }, async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'kb_get', arguments: { id: RUNBOOK } } };
    const input = [
      JSON.stringify(init),
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      'not json {',
      '{"jsonrpc":"2.0","id":"x","method":42}',
      JSON.stringify(call),
      '',
    ].join('\n');
    // The stdio transport is the process's own stdin and stdout: a child of its own.
    const r = await runCli(['mcp', '--catalog', CATALOG], { env: { REPRISE_DATA_DIR: dataDir }, input, process: true });
    expect(r.code, r.stderr).toBe(0);
    const replies = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: unknown; result?: { structuredContent?: { id: string } } });
    expect(replies.find((m) => m.id === 2)?.result?.structuredContent?.id).toBe(RUNBOOK);
    expect(r.stderr).toMatch(/not valid JSON/);
  });

  it('a stdio message over the body limit ends the session cleanly, with the reason logged', { timeout: 30_000 }, async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const huge = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'kb_search', arguments: { query: 'x'.repeat(2 * 1024 * 1024) } } };
    const r = await runCli(['mcp', '--catalog', CATALOG], {
      env: { REPRISE_DATA_DIR: dataDir },
      input: `${JSON.stringify(init)}\n${JSON.stringify(huge)}\n`,
      process: true, // stdio: the process's own streams
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('"serverInfo"');
    expect(r.stdout).not.toContain('"id":2');
    expect(r.stderr).toMatch(/exceeded maximum size of \d+ bytes/);
    expect(r.stderr).toContain('mcp server stopped');
  });

  it('serves Streamable HTTP behind a bearer token, follows the writer, refuses bad tokens and oversized bodies', { timeout: 60_000 }, async () => {
    const before = storeDigest();
    const mcp = await spawnHttp(['--catalog', CATALOG, '--store', storeUrl], { REPRISE_MCP_TOKEN: TOKEN });
    const client = new Client({ name: 'mcp-http-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcp.url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
    try {
      const report = await exerciseTools(client);
      expect(report['answer']).toMatchObject({ entry: CHECKOUT_ENTRY });
      await exerciseHostile(client);
    } finally {
      await client.close();
    }

    // Without the token, or with a wrong one (same length too): 401 before anything is read.
    const initBody = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const missing = await request(mcp.url, { path: '/mcp', headers, body: initBody });
    expect(missing.status).toBe(401);
    expect(missing.headers['www-authenticate']).toMatch(/Bearer/);
    for (const bad of ['wrong', TOKEN.replace(/.$/, 'X'), `${TOKEN}x`]) {
      const r = await request(mcp.url, { path: '/mcp', headers: { ...headers, authorization: `Bearer ${bad}` }, body: initBody });
      expect(r.status, bad).toBe(401);
      expect(JSON.stringify(r.json)).toContain('invalid bearer token');
    }
    const basic = await request(mcp.url, {
      path: '/mcp',
      headers: { ...headers, authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}` },
      body: initBody,
    });
    expect(basic.status).toBe(401);
    const noClient = new Client({ name: 'no-token', version: '1.0.0' });
    await expect(noClient.connect(new StreamableHTTPClientTransport(new URL(mcp.url)))).rejects.toThrow();

    const auth = { ...headers, authorization: `Bearer ${TOKEN}` };
    // Over the body limit (server.body_limit_bytes, 1 MiB): 413, declared or streamed.
    const declared = await requestOversize(mcp.url, { path: '/mcp', headers: auth, totalBytes: 2 * 1024 * 1024, mode: 'declared' });
    expect(declared.status).toBe(413);
    const streamed = await requestOversize(mcp.url, { path: '/mcp', headers: auth, totalBytes: 3 * 1024 * 1024, mode: 'chunked' });
    expect(streamed.status).toBe(413);
    // Malformed JSON-RPC: a JSON-RPC parse error, not a crash.
    const garbage = await request(mcp.url, { path: '/mcp', headers: auth, body: '{"jsonrpc": "2.0", "id": 1, "meth' });
    expect(garbage.status).toBe(400);
    expect(garbage.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
    const notRpc = await request(mcp.url, { path: '/mcp', headers: auth, body: '[1,2,3]' });
    expect(notRpc.status).toBe(400);
    expect((await request(mcp.url, { method: 'GET', path: '/mcp', headers: auth })).status).toBe(405);
    expect((await request(mcp.url, { method: 'GET', path: '/other', headers: auth })).status).toBe(404);

    expect(storeDigest()).toBe(before);

    // The bot (here: this test) appends; the next call sees it without a restart.
    await seedLedger([{ type: 'feedback', triggerKey: TRIGGER, user: 'carol', vote: 'up', via: 'cli', at: new Date().toISOString() } as LedgerEvent]);
    const again = new Client({ name: 'mcp-http-test-2', version: '1.0.0' });
    await again.connect(new StreamableHTTPClientTransport(new URL(mcp.url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
    const track = await again.callTool({ name: 'track_record', arguments: { entry: CHECKOUT_ENTRY } });
    expect(structured(track)).toMatchObject({ up: 2, recalls: 3, ledgerSeq: written + 1 });
    await again.close();

    expect(mcp.child.exitCode).toBeNull();
    const beforeStop = storeDigest();
    expect(await stopChild(mcp.child)).toBe(0);
    // Stopping writes nothing either (no final snapshot: that is the writer's job).
    expect(storeDigest()).toBe(beforeStop);
    expect(await ledgerSeq()).toBe(written + 1);
  });

  it('on loopback without a token it refuses foreign Host and Origin headers', { timeout: 30_000 }, async () => {
    const mcp = await spawnHttp(['--catalog', CATALOG]);
    const client = new Client({ name: 'loopback', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcp.url)));
    const r = await client.callTool({ name: 'kb_search', arguments: { query: 'crash loop' } });
    expect((structured(r)['results'] as unknown[]).length).toBeGreaterThan(0);
    await client.close();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    expect((await request(mcp.url, { path: '/mcp', headers: { ...headers, host: 'rebound.attacker.example' }, body })).status).toBe(403);
    expect((await request(mcp.url, { path: '/mcp', headers: { ...headers, origin: 'https://attacker.example' }, body })).status).toBe(403);
    expect(await stopChild(mcp.child)).toBe(0);
  });

  it('refuses a reachable bind without a token, a short token and a bad --http, saying how to fix it', { timeout: 90_000 }, async () => {
    const open = await runCli(['mcp', '--http', '0.0.0.0:0', '--catalog', CATALOG], { env: { REPRISE_DATA_DIR: dataDir } });
    expect(open.code).toBe(2);
    expect(open.stderr).toContain('REPRISE_MCP_TOKEN');
    expect(open.stderr).toContain('127.0.0.1');
    const short = await runCli(['mcp', '--http', '0.0.0.0:0', '--catalog', CATALOG], { env: { REPRISE_DATA_DIR: dataDir, REPRISE_MCP_TOKEN: 'short' } });
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/REPRISE_MCP_TOKEN must be at least 16 characters \(it has 5\); generate one with `openssl rand -hex 24`/);
    const example = await runCli(['mcp', '--http', '0.0.0.0:0', '--catalog', CATALOG], {
      env: { REPRISE_DATA_DIR: dataDir, REPRISE_MCP_TOKEN: 'CHANGE-ME-change-me' },
    });
    expect(example.code).toBe(2);
    expect(example.stderr).toMatch(/REPRISE_MCP_TOKEN is an example value from the docs, not a secret/);
    const bad = await runCli(['mcp', '--http', 'host:notaport'], { env: { REPRISE_DATA_DIR: dataDir } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--http must be PORT or HOST:PORT/);
    const help = await runCli(['mcp', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('kb_search');
    const missing = await runCli(['mcp', '--catalog', join(dataDir, 'nope')], { env: { REPRISE_DATA_DIR: dataDir } });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/does not exist/);
  });

  it('an empty data dir is an empty (valid) track record, and no store file is created', { timeout: 30_000 }, async () => {
    const empty = makeTmpDir('reprise-mcp-empty-');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN_JS, 'mcp', '--catalog', CATALOG],
      cwd: REPO_ROOT,
      env: childEnv({ REPRISE_DATA_DIR: empty }) as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'empty', version: '1.0.0' });
    await client.connect(transport);
    const t = await client.callTool({ name: 'track_record', arguments: { entry: CHECKOUT_ENTRY } });
    expect(structured(t)).toMatchObject({
      recalls: 0,
      resolved: 0,
      up: 0,
      down: 0,
      confirmations: 0,
      lastResolved: null,
      withheld: true,
      rate: 0.5,
      ledgerSeq: 0,
    });
    await client.close();
    expect(existsSync(join(empty, 'reprise.sqlite'))).toBe(false);
  });
  it("follows the bot's git clone: an entry merged and fetched is served without a restart", { timeout: 60_000 }, async () => {
    const remote = makeGitRemote({ 'incidents/first.md': incidentEntry({ title: 'first entry', resource: 'shop/web', alert: 'KubePodCrashLooping' }) });
    try {
      const config = join(dataDir, 'git.yaml');
      // The work clone stands for the bot's clone: a push from it moves its HEAD as a fetch would.
      writeFileSync(
        config,
        `catalog:\n  git:\n    url: ${remote.bare}\n    clone_dir: ${remote.work}\n    poll_interval: 1s\nstore:\n  data_dir: ${dataDir}\n`,
      );
      const mcp = await spawnHttp(['--config', config]);
      const client = new Client({ name: 'git', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(mcp.url)));
      expect(structured(await client.callTool({ name: 'kb_get', arguments: { id: 'incidents/first.md' } }))['title']).toBe('first entry');
      const missing = await client.callTool({ name: 'kb_get', arguments: { id: 'incidents/second.md' } });
      expect(missing.isError).toBe(true);
      remote.push({ 'incidents/second.md': incidentEntry({ title: 'second entry', resource: 'shop/api', alert: 'KubePodCrashLooping' }) });
      await waitFor(() => (mcp.stderr().includes('catalog clone moved') ? true : undefined), { what: 're-index after the clone moved', timeoutMs: 20_000 });
      expect(structured(await client.callTool({ name: 'kb_get', arguments: { id: 'incidents/second.md' } }))['title']).toBe('second entry');
      await client.close();
      expect(await stopChild(mcp.child)).toBe(0);
      expect(git(remote.work, 'status', '--porcelain')).toBe('');
    } finally {
      remote.cleanup();
    }
  });
});

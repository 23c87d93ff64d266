/**
 * The catalog MCP server's tools over an in-memory linked pair: what each returns for the
 * bundled catalog and an in-memory ledger, and how it refuses what it must.
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { createStore } from '../../../../src/adapters/keyv/keyv-store.js';
import { createCatalogMcpServer, type TrackRecordSource } from '../../../../src/adapters/mcp/catalog-mcp-server.js';
import { loadSnapshot } from '../../../../src/runtime/open-catalog.js';
import { recallOptions } from '../../../../src/runtime/recall-options.js';
import { Ledger } from '../../../../src/core/ledger/ledger.js';
import type { CatalogSnapshot } from '../../../../src/core/recall/catalog-snapshot.js';
import { silentLogger } from '../../../../src/ports/logger.js';
import { ManualClock } from '../../../../src/ports/clock.js';

const CATALOG = fileURLToPath(new URL('../../../../catalog', import.meta.url));
const RUNBOOK = 'kubernetes/KubePodCrashLooping.md';
const CHECKOUT = 'incidents/checkout-api-oomkilled.md';
const NOW = new Date('2026-12-01T08:00:00Z');

let snapshot: CatalogSnapshot;
beforeAll(async () => {
  snapshot = (await loadSnapshot(CATALOG)).snapshot;
});

/** A ledger view over an in-memory store that counts its refreshes. */
async function memoryLedger(): Promise<{ ledger: Ledger; view: TrackRecordSource & { refreshes: number } }> {
  const ledger = await Ledger.open(createStore('memory://', '.'), { snapshotEvery: 0 });
  const view = {
    refreshes: 0,
    refresh: async () => void view.refreshes++,
    read: ledger.read,
  };
  return { ledger, view };
}

async function connect(view: TrackRecordSource): Promise<Client> {
  const server = createCatalogMcpServer({
    catalog: () => snapshot,
    ledger: view,
    recallOptions: recallOptions(),
    fieldLimit: 8192,
    logger: silentLogger,
    clock: new ManualClock(NOW),
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const client = new Client({ name: 'unit', version: '1' });
  await client.connect(a);
  return client;
}

const structured = (r: unknown) => (r as CallToolResult).structuredContent as Record<string, unknown>;
const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;

describe('catalog MCP server', () => {
  it('declares four read-only tools with bounded inputs', async () => {
    const client = await connect((await memoryLedger()).view);
    const { tools } = await client.listTools();
    expect(tools.map((t) => [t.name, t.annotations?.readOnlyHint, t.annotations?.destructiveHint])).toEqual([
      ['kb_search', true, false],
      ['kb_get', true, false],
      ['recall', true, false],
      ['track_record', true, false],
    ]);
    const search = tools.find((t) => t.name === 'kb_search')!.inputSchema as { properties: Record<string, { maxLength?: number; maximum?: number }> };
    expect(search.properties['query']?.maxLength).toBe(2000);
    expect(search.properties['limit']?.maximum).toBe(20);
  });

  it('grades a resource-less entry as a runbook by default, and as asked with kind', async () => {
    const { ledger, view } = await memoryLedger();
    await ledger.append({
      type: 'open',
      id: 'o1',
      fingerprint: 'f1',
      triggerKey: 't1',
      kind: 'recall',
      entry: RUNBOOK,
      answerKind: 'runbook',
      dupFingerprint: 'd',
      verdict: 'inconclusive',
      resolvable: true,
      at: '2026-12-01T07:00:00Z',
    });
    await ledger.append({ type: 'feedback', triggerKey: 't1', user: 'u', vote: 'down', openId: 'o1', at: '2026-12-01T07:01:00Z' });
    const client = await connect(view);
    const asRunbook = structured(await client.callTool({ name: 'track_record', arguments: { entry: RUNBOOK } }));
    // Runbook: rate = (👍 + 1) / (👍 + 👎 + 2) = 1/3, below the 0.5 floor. Showing a runbook is
    // not a recall that claims to resolve anything: it does not count as one.
    expect(asRunbook).toMatchObject({ kind: 'runbook', recalls: 0, down: 1, rate: 0.333, withheld: false, passesOutcomeGate: false, ledgerSeq: 2 });
    const asIncident = structured(await client.callTool({ name: 'track_record', arguments: { entry: RUNBOOK, kind: 'incident' } }));
    expect(asIncident).toMatchObject({ kind: 'incident' });
    // An id the catalog does not hold is still answered (the ledger may remember a retired entry).
    const gone = await client.callTool({ name: 'track_record', arguments: { entry: 'incidents/retired-long-ago.md' } });
    expect(structured(gone)).toMatchObject({ inCatalog: false, kind: 'incident', recalls: 0, withheld: true });
    expect(text(gone)).toContain('not in the served catalog');
    expect(view.refreshes).toBe(3);
  });

  it('recall reads the ledger fresh, and names what is wrong with an unusable alert', async () => {
    const { view } = await memoryLedger();
    const client = await connect(view);
    const r = await client.callTool({
      name: 'recall',
      arguments: { labels: { alertname: 'KubePodCrashLooping', namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q' } },
    });
    expect(structured(r)).toMatchObject({ answer: { kind: 'incident', entry: CHECKOUT }, status: 'firing', ledgerSeq: 0 });
    expect((structured(r)['trace'] as unknown[]).length).toBeGreaterThan(2);
    expect(view.refreshes).toBe(1);
    const blank = await client.callTool({ name: 'recall', arguments: { labels: { alertname: '   ' } } });
    expect(blank.isError).toBe(true);
    expect(text(blank)).toMatch(/labels\.alertname/);
  });

  it('kb_get returns the entry and refuses ids that are paths out of the catalog', async () => {
    const client = await connect((await memoryLedger()).view);
    expect(structured(await client.callTool({ name: 'kb_get', arguments: { id: CHECKOUT } }))).toMatchObject({
      id: CHECKOUT,
      type: 'Incident',
      resource: expect.stringContaining('checkout-api'),
    });
    for (const id of ['../x.md', 'a/../../x.md', '/etc/passwd', 'C:\\x.md', 'a\\..\\x', './incidents/checkout-api-oomkilled.md', 'x\u0000y']) {
      const r = await client.callTool({ name: 'kb_get', arguments: { id } });
      expect(r.isError, id).toBe(true);
      expect(text(r), id).toContain('is not a catalog entry id');
    }
  });
});

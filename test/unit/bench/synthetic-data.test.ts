import { describe, expect, it } from 'vitest';
import { entryStats, replayEvents } from '../../../src/core/ledger/ledger-state.js';
import { naiveEntryStats } from '../../../bench/naive-entry-stats.js';
import { percentile, summarizeNs } from '../../../bench/percentile.js';
import { createRng } from '../../../src/core/eval/prng.js';
import { zipfSampler } from '../../../bench/sampling.js';
import { generateCatalog } from '../../../bench/synthetic-catalog.js';
import { generateIncidents, generateQueries } from '../../../bench/synthetic-queries.js';
import { generateEvents, ledgerEntryId } from '../../../bench/synthetic-events.js';
import { fmtCount, speedRatio } from '../../../bench/format-table.js';

describe('percentile', () => {
  it('uses the nearest rank', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(xs, 50)).toBe(50);
    expect(percentile(xs, 99)).toBe(99);
    expect(percentile(xs, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([1, 2, 3], 0)).toBe(1);
    expect(percentile([], 50)).toBeNaN();
  });

  it('summarises nanoseconds in milliseconds, whatever the input order', () => {
    const s = summarizeNs([3e6, 1e6, 2e6, 4e6]);
    expect(s).toMatchObject({ n: 4, p50: 2, p99: 4, max: 4, mean: 2.5 });
  });
});

describe('seeded randomness', () => {
  it('repeats for a seed and differs across seeds', () => {
    const a = createRng(1);
    const b = createRng(1);
    const c = createRng(2);
    const xs = Array.from({ length: 5 }, () => a());
    expect(Array.from({ length: 5 }, () => b())).toEqual(xs);
    expect(Array.from({ length: 5 }, () => c())).not.toEqual(xs);
    for (const x of xs) expect(x >= 0 && x < 1).toBe(true);
  });

  it('samples Zipf ranks: rank 0 most often, counts falling with rank', () => {
    const rng = createRng(3);
    const zipf = zipfSampler(1000, 1);
    const counts = new Array<number>(1000).fill(0);
    for (let i = 0; i < 50_000; i++) counts[zipf(rng)]! += 1;
    // 1/H(1000) ≈ 13% of draws land on rank 0; rank 9 gets about a tenth of that.
    expect(counts[0]! / 50_000).toBeGreaterThan(0.11);
    expect(counts[0]! / 50_000).toBeLessThan(0.16);
    expect(counts[0]!).toBeGreaterThan(counts[9]! * 6);
  });
});

describe('generateCatalog', () => {
  const catalog = generateCatalog(500, 42);

  it('is deterministic for a seed', () => {
    const again = generateCatalog(500, 42);
    expect(again.entries.map((e) => [e.id, e.title, e.body.length])).toEqual(catalog.entries.map((e) => [e.id, e.title, e.body.length]));
    expect(generateCatalog(500, 43).entries[0]?.body).not.toBe(catalog.entries[0]?.body);
  });

  it('makes Playbooks named after CamelCase alerts and Incidents scoped to ns/name', () => {
    const playbooks = catalog.entries.filter((e) => e.type === 'Playbook');
    const incidents = catalog.entries.filter((e) => e.type === 'Incident');
    expect(playbooks.length).toBe(50);
    expect(incidents.length).toBe(450);
    for (const p of playbooks) {
      expect(p.resource).toBeUndefined();
      expect(p.alerts).toHaveLength(1);
      expect(p.id.toLowerCase()).toContain(`/${p.alerts[0]}.md`);
      expect(p.id).toMatch(/\/([A-Z][a-z0-9]+){3,}\.md$/);
    }
    for (const i of incidents) {
      expect(i.resource?.raw).toBe(`${i.resource?.namespace}/${i.resource?.name}`);
      expect(i.alerts[0]).toBe(i.alerts[0]?.toLowerCase());
    }
    expect(new Set(catalog.entries.map((e) => e.id)).size).toBe(500);
  });

  it('writes bodies of 150–400 words', () => {
    for (const e of catalog.entries) {
      const words = e.body.split(/\s+/).filter((w) => /[a-z]/i.test(w) && !w.startsWith('#'));
      expect(words.length).toBeGreaterThanOrEqual(150);
      expect(words.length).toBeLessThanOrEqual(404); // 400 plus the four heading words
    }
  });

  it('builds queries from entries and incidents through the Alertmanager normaliser', () => {
    const queries = generateQueries(catalog, 20, 1);
    expect(queries).toHaveLength(20);
    for (const q of queries) expect(q.tokens.length).toBeGreaterThan(5);
    const incidents = generateIncidents(catalog, 20, 1);
    expect(incidents).toHaveLength(20);
    for (const inc of incidents) {
      expect(inc.workload?.name).not.toBe('');
      expect(catalog.alertNames).toContain(inc.alertname);
    }
  });
});

describe('naive ledger baseline', () => {
  it('agrees with the replayed read model on every entry', () => {
    const shape = { events: 20_000, triggers: 300, entries: 40, fingerprintsPerTrigger: 2, users: 10 };
    const events = generateEvents(shape, 5);
    expect(events).toHaveLength(20_000);
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(['open', 'resolve', 'feedback', 'silence', 'confirm']));
    const state = replayEvents(events);
    expect(state.skipped).toBe(0);
    let seen = 0;
    for (let k = 0; k < shape.entries; k++) {
      const id = ledgerEntryId(k);
      const { recalls, resolved, up, down, confirmations } = entryStats(state, id);
      expect(naiveEntryStats(events, id)).toEqual({ recalls, resolved, up, down, confirmations });
      seen += recalls + up + down;
    }
    expect(seen).toBeGreaterThan(0);
  });
});

describe('formatting', () => {
  it('reports ratios both ways and short counts', () => {
    expect(speedRatio(30, 3)).toBe('×10.0 faster');
    expect(speedRatio(1, 2)).toBe('×2.00 slower');
    expect(speedRatio(undefined, 2)).toBe('–');
    expect(fmtCount(100_000)).toBe('100k');
    expect(fmtCount(1_000_000)).toBe('1M');
  });
});

/**
 * Benchmark, not a test: skipped unless REPRISE_BENCH=1. Prints how long a sync takes after a
 * one-file push (in place), the same with a full rebuild, and with HEAD unchanged.
 *   REPRISE_BENCH=1 N=5000 npx vitest run test/unit/git/catalog-sync-bench.test.ts
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { GitMirror } from '../../../src/adapters/git/git-mirror.js';
import { CatalogSync } from '../../../src/core/catalog/catalog-sync.js';
import { generateCatalog } from '../../../bench/synthetic-catalog.js';
import { entryMarkdown } from '../../../bench/catalog-files.js';
import { systemClock } from '../../../src/ports/clock.js';
import { silentLogger } from '../../../src/ports/logger.js';
import { makeGitRemote } from '../../helpers/git-remote.js';

it.skipIf(process.env['REPRISE_BENCH'] !== '1')(
  'catalog sync: one-file push, in place vs full rebuild vs unchanged (prints figures)',
  { timeout: 600_000 },
  async () => {
    const n = Number(process.env['N'] ?? 1000);
    const cat = generateCatalog(n);
    const files: Record<string, string> = {};
    for (const e of cat.entries) files[e.id] = entryMarkdown(e);
    const t0 = performance.now();
    const remote = makeGitRemote(files);
    console.log(`remote made ${(performance.now() - t0).toFixed(0)} ms`);
    const mk = (dir: string, limit: number) =>
      new CatalogSync({
        mirror: new GitMirror({ url: remote.bare, branch: 'main', dir: join(remote.root, dir) }),
        clock: systemClock,
        logger: silentLogger,
        incrementalLimit: limit,
      });
    const inc = mk('a', 200);
    const full = mk('b', 0);
    let t = performance.now();
    await inc.syncNow();
    console.log(`first clone+index ${n} entries: ${(performance.now() - t).toFixed(0)} ms`);
    await full.syncNow();
    const rows: string[] = [];
    for (let round = 0; round < 5; round++) {
      const e = cat.entries[round * 7]!;
      remote.push({ [e.id]: entryMarkdown(e).replace('## Cause', `## Cause\n\nround ${round} edit.`) });
      t = performance.now();
      const a = await inc.syncNow();
      const ti = performance.now() - t;
      t = performance.now();
      const b = await full.syncNow();
      const tf = performance.now() - t;
      t = performance.now();
      const c = await inc.syncNow();
      const tn = performance.now() - t;
      // The figures only mean something if each path did what it is timed as, on the same catalog.
      expect([a.mode, b.mode, c.mode]).toEqual(['incremental', 'full', 'none']);
      expect([a.head, b.head, c.head]).toEqual([a.head, a.head, a.head]);
      expect(a.entries).toBe(n);
      expect(b.entries).toBe(n);
      expect(a.entriesChanged).toBe(1);
      rows.push(`one-file push: ${a.mode} ${ti.toFixed(0)} ms | ${b.mode} ${tf.toFixed(0)} ms | unchanged (${c.mode}) ${tn.toFixed(0)} ms`);
    }
    console.log(rows.join('\n'));
    remote.cleanup();
  },
);

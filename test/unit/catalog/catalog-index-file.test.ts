/**
 * The saved catalog index (issue 30 item 5): read back only for the very files it was built
 * from, rebuilt — never a crash — when the catalog changed or the file is stale, torn, damaged
 * or left half-written by a crash; and what is read back answers exactly as a fresh build.
 */
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeCatalogFiles } from '../../../bench/catalog-files.js';
import { generateCatalog } from '../../../bench/synthetic-catalog.js';
import { generateQueries } from '../../../bench/synthetic-queries.js';
import type { CatalogSnapshot } from '../../../src/core/recall/catalog-snapshot.js';
import { tokenize } from '../../../src/core/tokenize.js';
import type { Logger } from '../../../src/ports/logger.js';
import { CATALOG_INDEX_FILE, catalogKey, catalogStatKey, readSavedCatalog, writeSavedCatalog, type SavedCatalog } from '../../../src/runtime/catalog-index-file.js';
import { loadSnapshot } from '../../../src/runtime/open-catalog.js';
import { staticCatalog } from '../../../src/runtime/served-catalog.js';
import { readCatalogFiles, statCatalogFiles } from '../../../src/core/catalog/load-catalog.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const synthetic = generateCatalog(300, 5);
const queries = [...generateQueries(synthetic, 150, 9).map((q) => q.tokens), ...synthetic.entries.slice(0, 50).map((e) => tokenize(e.title))];

let dir: string;
let catalog: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'reprise-index-file-'));
  catalog = join(dir, 'catalog');
  // The starter catalog (foreign runbooks, pointer pages), a broken one (lint problems), synthetic entries.
  cpSync(join(REPO, 'catalog'), join(catalog, 'starter'), { recursive: true });
  cpSync(join(REPO, 'test', 'fixtures', 'catalog-broken'), join(catalog, 'broken'), { recursive: true });
  writeCatalogFiles(join(catalog, 'synthetic'), synthetic.entries);
  mkdirSync(join(dir, 'data'));
  file = join(dir, 'data', CATALOG_INDEX_FILE);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Everything recall reads from a snapshot, as plain data. */
function view(s: CatalogSnapshot): unknown {
  const ids = (m: ReadonlyMap<string, readonly { id: string }[]>): unknown => [...m].map(([k, l]) => [k, l.map((e) => e.id)]);
  return {
    entries: s.entries,
    byId: [...s.byId.keys()],
    byAlert: ids(s.byAlert),
    knownAlerts: [...s.knownAlerts],
    bySource: [...s.bySource].map(([k, e]) => [k, e.id]),
    nameWords: [...s.nameWords],
    family: [...s.family],
    nameFrequency: [...s.nameFrequency],
    size: s.index.size,
    answers: queries.map((q) => s.index.search(q, 20).map((c) => [c.entry.id, c.score])),
    scores: queries.slice(0, 20).map((q, i) => s.index.score(q, s.entries[i * 7]!.id)),
  };
}

/** The first synthetic entry file under catalog `c`. */
function firstEntry(c: string): string {
  const rel = readdirSync(join(c, 'synthetic'), { recursive: true, encoding: 'utf8' }).filter((n) => n.endsWith('.md')).sort()[0]!;
  return join(c, 'synthetic', rel);
}

function recordingLogger(lines: string[]): Logger {
  const log: Logger = {
    debug: () => {},
    info: () => {},
    warn: (o, m) => void lines.push(typeof o === 'string' ? o : (m ?? '')),
    error: (o, m) => void lines.push(typeof o === 'string' ? o : (m ?? '')),
    child: () => log,
  };
  return log;
}

/** The saved catalog in `file`, for the catalog as it is now. */
async function savedNow(): Promise<SavedCatalog> {
  const read = readSavedCatalog(file, catalogKey(await readCatalogFiles(catalog)));
  if (!('saved' in read)) throw new Error(read.reason);
  return read.saved;
}

/** Waits (a state, not a duration) until the clock has moved past every catalog file's last change. */
async function pastEveryChange(): Promise<void> {
  const { files } = await statCatalogFiles(catalog);
  const newest = Math.max(...files.map((f) => f.changedMs));
  while (Date.now() <= newest + 1) await new Promise((r) => setImmediate(r));
}

describe('saved catalog index', () => {
  it('round trip: the second load reads the index back and answers exactly as the first built it', async () => {
    const built = await loadSnapshot(catalog, { indexFile: file });
    expect(built.index).toEqual({ from: 'built', reason: 'no saved index yet' });
    expect(existsSync(file)).toBe(true);
    const saved = await loadSnapshot(catalog, { indexFile: file });
    expect(saved.index).toEqual({ from: 'saved', checked: 'content' });
    expect(saved.problems).toEqual(built.problems);
    expect(saved.problems.some((p) => p.severity === 'error')).toBe(true);
    expect(saved.skipped).toEqual(built.skipped);
    expect(view(saved.snapshot)).toEqual(view(built.snapshot));
    // And both answer as a load without any index file.
    expect(view(saved.snapshot)).toEqual(view((await loadSnapshot(catalog)).snapshot));
    // The file is private: entries may quote private runbooks.
    expect(readdirSync(join(dir, 'data'))).toEqual([CATALOG_INDEX_FILE]);
  });

  it('a read-back index updates in place like a fresh one', async () => {
    await loadSnapshot(catalog, { indexFile: file });
    const a = (await loadSnapshot(catalog, { indexFile: file })).snapshot;
    const b = (await loadSnapshot(catalog)).snapshot;
    const [first, second] = synthetic.entries;
    const changed = { ...first!, title: `${first!.title} rewritten zebra`, body: `${first!.body}\nzebra quagga` };
    for (const s of [a, b]) (s.index as unknown as { update(u: unknown[], r: string[]): void }).update([changed], [second!.id]);
    const q = [tokenize('zebra quagga'), ...queries.slice(0, 40)];
    expect(q.map((t) => a.index.search(t, 10).map((c) => [c.entry.id, c.score]))).toEqual(q.map((t) => b.index.search(t, 10).map((c) => [c.entry.id, c.score])));
  });

  it.each([
    ['an entry edited', (c: string) => writeFileSync(firstEntry(c), '---\ntype: Playbook\ntitle: Edited zebra\n---\n# Edited zebra\n\nquagga\n')],
    ['an entry added', (c: string) => writeFileSync(join(c, 'added-zebra.md'), '---\ntype: Playbook\ntitle: Added zebra\n---\n# Added zebra\n\nquagga\n')],
    ['an entry removed', (c: string) => unlinkSync(firstEntry(c))],
    ['an entry renamed', (c: string) => cpSync(join(c, 'starter'), join(c, 'moved'), { recursive: true, force: true }) ?? rmSync(join(c, 'starter'), { recursive: true })],
  ])('stale: %s → rebuilt from the files as they are now, and saved again', async (_what, change) => {
    await loadSnapshot(catalog, { indexFile: file });
    change(catalog);
    const again = await loadSnapshot(catalog, { indexFile: file });
    expect(again.index).toEqual({ from: 'built', reason: 'the catalog or the code changed since the index was saved' });
    expect(view(again.snapshot)).toEqual(view((await loadSnapshot(catalog)).snapshot));
    expect((await loadSnapshot(catalog, { indexFile: file })).index).toEqual({ from: 'saved', checked: 'content' });
  });

  it('the key covers every file, its path and bytes, and files refused on read', async () => {
    const files = await readCatalogFiles(catalog);
    const key = catalogKey(files);
    expect(catalogKey(files.map((f) => ({ ...f }))), 'same files, same key').toBe(key);
    expect(catalogKey(files.slice(1))).not.toBe(key);
    expect(catalogKey(files.map((f, i) => (i === 3 ? { ...f, rel: `x${f.rel}` } : f)))).not.toBe(key);
    expect(catalogKey(files.map((f, i) => (i === 3 && f.text !== undefined ? { ...f, text: `${f.text} ` } : f)))).not.toBe(key);
    // Moving bytes between a path and its text is another catalog.
    expect(catalogKey([{ rel: 'a.md', text: 'bc' }])).not.toBe(catalogKey([{ rel: 'ab.md', text: 'c' }]));
    const refused = { rel: 'r.md', problem: { file: 'r.md', line: 1, rule: 'file-too-large', severity: 'error' as const, message: 'm' } };
    expect(catalogKey([refused])).not.toBe(catalogKey([{ rel: 'r.md', text: '' }]));
  });

  it.each([
    ['a flipped byte', (b: Buffer) => (b[b.length - 100] = b[b.length - 100]! ^ 0xff), 'the saved index is damaged (its checksum differs)'],
    ['torn in half', (b: Buffer) => b.subarray(0, b.length >> 1), 'the saved index is damaged (its checksum differs)'],
    ['a few bytes', (b: Buffer) => b.subarray(0, 10), 'the saved index is not one this build writes'],
    ['empty', () => Buffer.alloc(0), 'the saved index is not one this build writes'],
    ['another format', (b: Buffer) => Buffer.concat([Buffer.from('something else entirely\n'), b]), 'the saved index is not one this build writes'],
  ])('corrupt: %s → rebuilt (never a crash), then read back', async (_what, damage, reason) => {
    const built = await loadSnapshot(catalog, { indexFile: file });
    const bytes = readFileSync(file);
    const out = damage(bytes);
    writeFileSync(file, Buffer.isBuffer(out) ? out : bytes);
    const again = await loadSnapshot(catalog, { indexFile: file });
    expect(again.index).toEqual({ from: 'built', reason });
    expect(view(again.snapshot)).toEqual(view(built.snapshot));
    expect((await loadSnapshot(catalog, { indexFile: file })).index).toEqual({ from: 'saved', checked: 'content' });
  });

  it('a save whose checksum holds but whose arrays do not fit together is rebuilt, not served', async () => {
    await loadSnapshot(catalog, { indexFile: file });
    const key = catalogKey(await readCatalogFiles(catalog));
    const read = readSavedCatalog(file, key);
    if (!('saved' in read)) throw new Error(read.reason);
    const { saved } = read;
    const tampered = [
      { ...saved, index: { ...saved.index, store: { ...saved.index.store, postings: { ...saved.index.store.postings, df: saved.index.store.postings.df.map((d) => d + 1) } } } },
      { ...saved, index: { ...saved.index, store: { ...saved.index.store, postings: { ...saved.index.store.postings, docs: saved.index.store.postings.docs.map(() => 1e6) } } } },
      { ...saved, index: { ...saved.index, store: { ...saved.index.store, docs: { ...saved.index.store.docs, lens: [] } } } },
      { ...saved, index: { ...saved.index, params: { ...saved.index.params, k1: 9 } } },
      { ...saved, entries: saved.entries.slice(1) },
      { ...saved, tables: { ...saved.tables, byAlert: [['x', ['no/such/entry.md']]] as Array<[string, string[]]> } },
      { ...saved, tables: null },
    ];
    const fresh = view((await loadSnapshot(catalog)).snapshot);
    for (const t of tampered) {
      writeSavedCatalog(file, t as typeof saved);
      const again = await loadSnapshot(catalog, { indexFile: file });
      expect(again.index?.from).toBe('built');
      expect(view(again.snapshot)).toEqual(fresh);
    }
  });

  it('a crash between writing and renaming leaves the old index whole; the leftover goes with the next write', async () => {
    await pastEveryChange();
    await loadSnapshot(catalog, { indexFile: file, racyMs: 0 });
    const before = readFileSync(file);
    // What a writer killed before its rename leaves: a partial temporary file beside the index.
    const leftover = `${file}.99999.tmp`;
    writeFileSync(leftover, before.subarray(0, before.length >> 2));
    // Served on the files' stats: nothing is written.
    const again = await loadSnapshot(catalog, { indexFile: file, racyMs: 0 });
    expect(again.index).toEqual({ from: 'saved', checked: 'stat' });
    expect(readFileSync(file).equals(before)).toBe(true);
    // The next write (the catalog changed) replaces the index and removes the leftover.
    writeFileSync(join(catalog, 'added.md'), '---\ntype: Playbook\ntitle: Added\n---\n# Added\n\ntext\n');
    expect((await loadSnapshot(catalog, { indexFile: file })).index?.from).toBe('built');
    expect(readdirSync(join(dir, 'data')).sort()).toEqual([CATALOG_INDEX_FILE]);
    expect((await loadSnapshot(catalog, { indexFile: file })).index?.from).toBe('saved');
  });

  it('an index file that cannot be written is reported and the catalog still loads', async () => {
    if (process.getuid?.() === 0) {
      // root writes through modes: a folder where the file should be makes the write fail instead.
      mkdirSync(file);
    } else chmodSync(join(dir, 'data'), 0o500);
    const lines: string[] = [];
    const r = await loadSnapshot(catalog, { indexFile: file, logger: recordingLogger(lines) });
    expect(r.index?.from).toBe('built');
    expect(r.snapshot.entries.length).toBeGreaterThan(300);
    expect(lines).toEqual(['the catalog index could not be saved; the next start indexes the catalog again']);
  });

  it('files that stand as they were read: served on their stats alone, and reading them after ready confirms it', async () => {
    await pastEveryChange();
    const built = await loadSnapshot(catalog, { indexFile: file, racyMs: 0 });
    expect(built.index?.from).toBe('built');
    const again = await loadSnapshot(catalog, { indexFile: file, racyMs: 0 });
    expect(again.index).toEqual({ from: 'saved', checked: 'stat' });
    expect(view(again.snapshot)).toEqual(view(built.snapshot));
    expect(again.verify).toBeTypeOf('function');
    await expect(again.verify!()).resolves.toBeUndefined();
  });

  it('files changed just before their stats were recorded prove nothing: the catalog is read (racily clean)', async () => {
    // beforeEach wrote every file moments ago: within RACY_MS of the first load's stats.
    await loadSnapshot(catalog, { indexFile: file });
    const again = await loadSnapshot(catalog, { indexFile: file });
    expect(again.index).toEqual({ from: 'saved', checked: 'content' });
    expect(again.verify).toBeUndefined();
  });

  it('an edit of the same size with the modification time set back is seen (the change time moves)', async () => {
    await pastEveryChange();
    await loadSnapshot(catalog, { indexFile: file, racyMs: 0 });
    const path = firstEntry(catalog);
    const before = statSync(path);
    const text = readFileSync(path, 'utf8');
    const bodyAt = text.indexOf('\n---', 4) + 4;
    const edited = text.slice(0, bodyAt) + text.slice(bodyAt).replace(/\b[a-z]{6}\b/, 'zebraq');
    expect(edited).not.toBe(text);
    expect(Buffer.byteLength(edited)).toBe(before.size);
    writeFileSync(path, edited);
    utimesSync(path, before.atime, before.mtime);
    await pastEveryChange();
    const again = await loadSnapshot(catalog, { indexFile: file, racyMs: 0 });
    expect(again.index).toEqual({ from: 'built', reason: 'the catalog or the code changed since the index was saved' });
    expect(view(again.snapshot)).toEqual(view((await loadSnapshot(catalog)).snapshot));
    expect(again.snapshot.index.search(tokenize('zebraq'), 5).length).toBeGreaterThan(0);
  });

  it('stats that lie (the same stats over other bytes): the saved index serves until ready, then the files as they are replace it', async () => {
    await loadSnapshot(catalog, { indexFile: file });
    const stale = view((await loadSnapshot(catalog)).snapshot);
    writeFileSync(join(catalog, 'added-zebra.md'), '---\ntype: Playbook\ntitle: Added zebra\n---\n# Added zebra\n\nquagga\n');
    // A file system whose stats do not move: the saved stats are made to match the files as they are now.
    const { root, files } = await statCatalogFiles(catalog);
    const old = readSavedCatalog(file, catalogKey((await readCatalogFiles(catalog)).filter((f) => f.rel !== 'added-zebra.md')));
    if (!('saved' in old)) throw new Error(old.reason);
    writeSavedCatalog(file, { ...old.saved, stat: { key: catalogStatKey(root, files), at: Date.now() + 3_600_000 } });

    const served = await staticCatalog(catalog, false, recordingLogger([]), file);
    expect(view(served.current())).toEqual(stale);
    served.start();
    await served.stop();
    const fresh = view((await loadSnapshot(catalog)).snapshot);
    expect(fresh).not.toEqual(stale);
    expect(view(served.current())).toEqual(fresh);
    expect(served.current().entries.some((e) => e.title === 'Added zebra')).toBe(true);
    // And saved again for the files as they are.
    expect((await loadSnapshot(catalog, { indexFile: file })).index).toEqual({ from: 'saved', checked: 'content' });
  });

  it('an index saved without stats (an older build) is read, checked by content and saved with them', async () => {
    await pastEveryChange();
    await loadSnapshot(catalog, { indexFile: file, racyMs: 0 });
    const { stat: _stat, ...withoutStat } = await savedNow();
    writeSavedCatalog(file, withoutStat);
    expect((await loadSnapshot(catalog, { indexFile: file, racyMs: 0 })).index).toEqual({ from: 'saved', checked: 'content' });
    expect((await savedNow()).stat).toBeDefined();
    expect((await loadSnapshot(catalog, { indexFile: file, racyMs: 0 })).index).toEqual({ from: 'saved', checked: 'stat' });
  });
});

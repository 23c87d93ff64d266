/**
 * The saved catalog index (issue 30 item 5): what `serve` built from a catalog folder — its
 * entries, lint problems and search index — kept in one file of the data dir, so the next start
 * over the same catalog reads it back instead of parsing and indexing every entry again.
 *
 * Keyed by content: a SHA-256 over every candidate entry file (path and bytes, or why it was
 * refused) and over the code that turns files into entries and an index. A catalog edited, a
 * file added or removed, or a new build of reprise gives another key, and the index is rebuilt.
 * Beside it, the files' stats when they were read (inode, size, modification and change
 * times): a start over files that stand exactly as they did then serves the index without
 * reading them (open-catalog.ts), and reads them after ready to confirm.
 *
 * File: a magic line, a checksum of the payload, then the payload (`node:v8` serialization:
 * typed arrays travel as bytes). The checksum is CRC-32 (it catches a torn or damaged file at a
 * tenth of a hash's cost on the 60 MB of a 10,000-entry catalog), SHA-256 on a Node without it. Anything that does not check out — another magic, a digest that
 * differs (a torn or damaged file), a payload that does not deserialize or does not fit — is a
 * reason to rebuild, never an error. Written to a temporary file, flushed, then renamed over
 * the old one: a crash in between leaves the old file whole and a temporary one that the next
 * write removes.
 */
import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deserialize, serialize } from 'node:v8';
import * as zlib from 'node:zlib';
import type { CatalogFile, CatalogFileStat } from '../core/catalog/load-catalog.js';
import type { SavedTables } from '../core/recall/catalog-snapshot.js';
import type { SavedIndex } from '../core/search/postings-index.js';
import type { Entry, LintProblem } from '../core/types.js';

/** Name of the file in the data dir. */
export const CATALOG_INDEX_FILE = 'catalog-index.bin';

const MAGIC = Buffer.from('reprise catalog index v1\n');
const DIGEST_BYTES = 32;

/** The payload's checksum, padded to DIGEST_BYTES (`zlib.crc32` is Node ≥ 22.2). */
function checksum(payload: Uint8Array): Buffer {
  const out = Buffer.alloc(DIGEST_BYTES);
  const crc32 = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;
  if (typeof crc32 === 'function') {
    out.write('crc32:');
    out.writeUInt32BE(crc32(payload) >>> 0, 6);
    return out;
  }
  return createHash('sha256').update(payload).digest();
}

/** What the file holds. */
export interface SavedCatalog {
  /** `catalogKey` of the files it was built from. */
  key: string;
  entries: Entry[];
  problems: LintProblem[];
  index: SavedIndex;
  /** The recall lookup tables (alerts, sources, name words) built beside the index. */
  tables: SavedTables;
  /**
   * How the files stood on disk when they were read ({@link catalogStatKey}) and when that was
   * (ms, taken before the stats): a start whose files stand the same, none of them changed
   * within {@link RACY_MS} of `at`, serves this index without reading them. Absent in files
   * written before it was recorded.
   */
  stat?: { key: string; at: number };
}

/**
 * A file changed this close to the moment its stats were recorded may have changed again
 * within the same file-system timestamp tick (git's "racily clean" entries): its stats prove
 * nothing, and the catalog is read. Covers coarse timestamps and a little clock skew.
 */
export const RACY_MS = 2000;

/**
 * Source folders of the code whose output is saved (parsing, tokenizing, indexing): any change
 * to them is a new key. Relative to this module, so the same holds for the build and the sources.
 */
const CODE = ['../core/catalog/', '../core/search/', '../core/recall/'];
const CODE_FILES = ['../core/tokenize.js', '../core/bm25.js', '../core/types.js', '../core/url-key.js'];

let codeDigest: string | undefined;

/** SHA-256 of the code that makes entries and the index (computed once per process). */
function codeKey(): string {
  if (codeDigest !== undefined) return codeDigest;
  const h = createHash('sha256');
  const here = import.meta.url;
  // Under the sources (tests) a module is `.ts`; the build has `.js`.
  const ext = here.endsWith('.ts') ? '.ts' : '.js';
  for (const folder of CODE) {
    const dir = fileURLToPath(new URL(folder, here));
    for (const name of readdirSync(dir)
      .filter((n) => n.endsWith(ext))
      .sort()) {
      h.update(`${folder}${name}\0`);
      h.update(readFileSync(join(dir, name)));
    }
  }
  for (const file of CODE_FILES) {
    const path = fileURLToPath(new URL(file.replace(/\.js$/, ext), here));
    h.update(`${file}\0`);
    h.update(readFileSync(path));
  }
  codeDigest = h.digest('hex');
  return codeDigest;
}

/** The key of a catalog as read: every file's path and text (or the problem that refused it), and the code. */
export function catalogKey(files: readonly CatalogFile[]): string {
  const h = createHash('sha256');
  h.update(`${codeKey()}\0${files.length}\0`);
  for (const f of files) {
    // Lengths first: no two different catalogs hash the same bytes.
    const body = f.text ?? `\u0000refused ${JSON.stringify(f.problem ?? null)}`;
    h.update(`${f.rel.length}:${f.rel}\0${Buffer.byteLength(body)}:`);
    h.update(body);
  }
  return h.digest('hex');
}

/** The key of a catalog as it stands on disk (`statCatalogFiles`): its folder, every file's path and stats, and the code. */
export function catalogStatKey(root: string, files: readonly CatalogFileStat[]): string {
  const h = createHash('sha256');
  h.update(`${codeKey()}\0${root.length}:${root}\0${files.length}\0`);
  for (const f of files) h.update(`${f.rel.length}:${f.rel}\0${f.id.length}:${f.id}\0`);
  return h.digest('hex');
}

/**
 * Whether `saved` may be served on the stats alone: recorded for the very same stats, and no
 * file changed within {@link RACY_MS} of when they were recorded (nor has an unknown time).
 */
export function statsProve(saved: SavedCatalog, statKey: string, files: readonly CatalogFileStat[], racyMs = RACY_MS): boolean {
  if (saved.stat?.key !== statKey) return false;
  const before = saved.stat.at - racyMs;
  return files.every((f) => f.changedMs < before);
}

/** A saved catalog for `key`, or why there is none usable (missing, another key, damaged). */
export function readSavedCatalog(file: string, key: string): { saved: SavedCatalog } | { reason: string } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    return unreadable(err);
  }
  return decodeSavedCatalog(bytes, key);
}

/** The bytes of the saved index, read while the catalog's files are (a start reads both at once). */
export async function readSavedBytes(file: string): Promise<Buffer | { reason: string }> {
  return readFile(file).catch(unreadable);
}

function unreadable(err: unknown): { reason: string } {
  const code = (err as NodeJS.ErrnoException).code;
  return { reason: code === 'ENOENT' ? 'no saved index yet' : `the saved index cannot be read (${code ?? String(err)})` };
}

/** The saved catalog in `bytes` (a whole index file) for `key`, or why it is not usable. */
export function decodeSavedCatalog(bytes: Buffer, key: string): { saved: SavedCatalog } | { reason: string } {
  const read = decodeSavedBytes(bytes);
  if ('saved' in read && read.saved.key !== key) return { reason: 'the catalog or the code changed since the index was saved' };
  return read;
}

/** The saved catalog in `bytes` whatever catalog it was built from, or why it is not usable. */
export function decodeSavedBytes(bytes: Buffer): { saved: SavedCatalog } | { reason: string } {
  const head = MAGIC.length + DIGEST_BYTES;
  if (bytes.length < head || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return { reason: 'the saved index is not one this build writes' };
  const payload = bytes.subarray(head);
  if (!checksum(payload).equals(bytes.subarray(MAGIC.length, head))) return { reason: 'the saved index is damaged (its checksum differs)' };
  let value: unknown;
  try {
    value = deserialize(payload);
  } catch {
    return { reason: 'the saved index is damaged (it does not deserialize)' };
  }
  if (!isSavedCatalog(value)) return { reason: 'the saved index has an unexpected shape' };
  return { saved: value };
}

function isSavedCatalog(v: unknown): v is SavedCatalog {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Partial<SavedCatalog>;
  return (
    typeof s.key === 'string' &&
    Array.isArray(s.entries) &&
    Array.isArray(s.problems) &&
    typeof s.index === 'object' &&
    s.index !== null &&
    typeof s.tables === 'object' &&
    s.tables !== null &&
    (s.stat === undefined || (typeof s.stat === 'object' && s.stat !== null && typeof s.stat.key === 'string' && Number.isFinite(s.stat.at)))
  );
}

/**
 * Writes `saved` to `file` whole or not at all: a temporary file beside it, flushed to disk,
 * then renamed over it (0600: entries may quote private runbooks). Leftover temporary files of
 * an earlier crash are removed.
 * @throws Error when the folder cannot be written (the caller logs it; the index still serves).
 */
export function writeSavedCatalog(file: string, saved: SavedCatalog): void {
  const payload = serialize(saved);
  const digest = checksum(payload);
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, MAGIC);
    writeSync(fd, digest);
    writeSync(fd, payload);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  removeLeftovers(file);
}

/** Temporary files of writes that never reached their rename (a crash). */
function removeLeftovers(file: string): void {
  const prefix = `${basename(file)}.`;
  for (const name of readdirSync(dirname(file))) {
    if (name.startsWith(prefix) && name.endsWith('.tmp')) rmSync(join(dirname(file), name), { force: true });
  }
}

import { lstatSync, statSync, type BigIntStats } from 'node:fs';
import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Entry, LintProblem } from '../types.js';
import { parseEntry } from './parse-entry.js';

/** Files that describe a catalog rather than being entries (SPEC §5), compared lower-case. */
export const SKIPPED_FILES: ReadonlySet<string> = new Set(['readme.md', 'index.md', '_index.md', 'log.md']);
/**
 * Top-level folders that are never entries: `postmortems/` holds drafted postmortems (issue 21
 * item 5), prose about one incident that must never be recalled as an answer.
 */
export const SKIPPED_DIRS: ReadonlySet<string> = new Set(['postmortems']);

/** Larger files are refused: an entry is a page of text, not a log dump. */
export const MAX_ENTRY_BYTES = 1024 * 1024;

export interface LoadedCatalog {
  /** Usable entries, sorted by id. */
  entries: Entry[];
  /** Every problem found, sorted by file then line. */
  problems: LintProblem[];
}

export type CatalogErrorCode = 'catalog_not_found' | 'catalog_not_directory';

/** The catalog root itself is unusable (as opposed to one bad entry, which is a LintProblem). */
export class CatalogError extends Error {
  constructor(readonly code: CatalogErrorCode, message: string) {
    super(message);
    this.name = 'CatalogError';
  }
}

/**
 * Whether a path (relative to the catalog root, with `/`) names a candidate entry file: a
 * `.md` file, not a catalog description file, with no dot segment. Symlinked directories are
 * not followed by the walk, so a path through one is not a candidate either (checked when read).
 */
export function isEntryPath(rel: string): boolean {
  const segs = rel.split('/');
  const name = segs.at(-1) ?? '';
  if (segs.length > 1 && SKIPPED_DIRS.has(segs[0]!.toLowerCase())) return false;
  return segs.every((s) => s !== '' && !s.startsWith('.')) && /\.md$/i.test(name) && !SKIPPED_FILES.has(name.toLowerCase());
}

/** Candidate entry files under `root`: relative paths (with `/`), sorted, and whether each is a link. */
async function listEntryFiles(root: string, rel = ''): Promise<Array<{ rel: string; link: boolean }>> {
  const dirents = await readdir(join(root, rel), { withFileTypes: true });
  const out: Array<{ rel: string; link: boolean }> = [];
  for (const d of dirents) {
    if (d.name.startsWith('.')) continue;
    if (rel === '' && d.isDirectory() && SKIPPED_DIRS.has(d.name.toLowerCase())) continue;
    const path = rel === '' ? d.name : `${rel}/${d.name}`;
    // Symlinked directories are not followed: a link cycle must not hang the loader.
    if (d.isDirectory()) out.push(...(await listEntryFiles(root, path)));
    else if ((d.isFile() || d.isSymbolicLink()) && /\.md$/i.test(d.name) && !SKIPPED_FILES.has(d.name.toLowerCase())) {
      out.push({ rel: path, link: d.isSymbolicLink() });
    }
  }
  return out.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

/**
 * Reads one entry. `realRoot` is the catalog root with links resolved: a file whose real path
 * leaves it (a symlink to /etc/passwd, to another repo) is skipped with a warning — the
 * catalog is what its repository holds, nothing else on the machine. `link` false: the walk
 * found a plain file through plain folders (it follows no linked folder), so its real path is
 * the root's plus `rel` and needs no lookup.
 */
async function readEntryFile(root: string, realRoot: string, rel: string, link = true): Promise<{ text?: string; problem?: LintProblem }> {
  const fail = (rule: string, message: string) => ({ problem: { file: rel, line: 1, rule, severity: 'error' as const, message } });
  try {
    const real = link ? await realpath(join(root, rel)) : realRoot;
    if (real !== realRoot && !real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep)) {
      const shown = relative(realRoot, real).startsWith('..') ? real : relative(realRoot, real);
      return { problem: { file: rel, line: 1, rule: 'file-outside-catalog', severity: 'warning', message: `links outside the catalog (to ${shown}); skipped — keep entries inside the catalog folder` } };
    }
    const s = await stat(join(root, rel));
    if (!s.isFile()) return fail('file-unreadable', 'not a regular file (a link to a directory?); remove it or make it a file');
    if (s.size > MAX_ENTRY_BYTES) {
      return fail('file-too-large', `file is ${s.size} bytes, over the ${MAX_ENTRY_BYTES}-byte limit; split it or move data out of the catalog`);
    }
    const bytes = await readFile(join(root, rel));
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return fail('file-encoding', 'file is not valid UTF-8; re-save it as UTF-8');
    }
    return { text };
  } catch (err) {
    return fail('file-unreadable', `cannot read file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); check it exists and is readable`);
  }
}

function byFileThenLine(a: LintProblem, b: LintProblem): number {
  return a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0);
}

/** One candidate entry file as read from disk: its text, or why it could not be used. */
export interface CatalogFile {
  /** Path relative to the catalog root, with `/`. */
  rel: string;
  text?: string;
  problem?: LintProblem;
}

/**
 * Reads every candidate entry file under `dir` (SPEC §5): `.md` files, recursively, skipping
 * dotfiles, dot-directories and README.md / index.md / _index.md / log.md; each with the checks
 * of one entry file (links out of the catalog, size, encoding). Nothing is parsed: what was read
 * is what a saved index is keyed by (its content), and `parseCatalogFiles` makes the entries.
 * @throws CatalogError when the root itself is unusable.
 */
export async function readCatalogFiles(dir: string): Promise<CatalogFile[]> {
  const s = await stat(dir).catch(() => undefined);
  if (s === undefined) throw new CatalogError('catalog_not_found', `catalog directory ${dir} does not exist`);
  if (!s.isDirectory()) throw new CatalogError('catalog_not_directory', `catalog path ${dir} is not a directory`);
  const realRoot = await realpath(dir);
  const listed = await listEntryFiles(dir);
  const files: CatalogFile[] = Array.from({ length: listed.length });
  // Several reads in flight: one at a time, 10,000 small files cost a thread-pool round trip
  // each in turn (seconds on a busy machine); in order of the listing all the same.
  let next = 0;
  const reader = async (): Promise<void> => {
    while (next < listed.length) {
      const i = next++;
      const { rel, link } = listed[i]!;
      files[i] = { rel, ...(await readEntryFile(dir, realRoot, rel, link)) };
    }
  };
  await Promise.all(Array.from({ length: Math.min(READS_IN_FLIGHT, listed.length) }, reader));
  return files;
}

/** One candidate entry file as it stands on disk, without its bytes. */
export interface CatalogFileStat {
  /** Path relative to the catalog root, with `/`. */
  rel: string;
  /**
   * Device, inode, mode, size, modification and change times (ns) — of the link and of its
   * target for a symlink — or why it could not be statted. Any write to the file moves its
   * change time, which no tool can set back.
   */
  id: string;
  /** The latest of its modification and change times, ms since the epoch (NaN when unknown). */
  changedMs: number;
}

function statId(s: BigIntStats): string {
  return `${s.dev}:${s.ino}:${s.mode}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}

/**
 * The candidate entry files under `dir` (the walk of `readCatalogFiles`) and how each stands
 * on disk, without reading them: what a start compares with the stats a saved index recorded
 * (catalog-index-file.ts), tens of milliseconds for 10,000 files where reading them takes
 * most of a second. Synchronous stats: a thread-pool round trip per file is what costs.
 * `root` is the folder with links resolved (what a link is checked against).
 * @throws CatalogError when the root itself is unusable.
 */
export async function statCatalogFiles(dir: string): Promise<{ root: string; files: CatalogFileStat[] }> {
  const s = await stat(dir).catch(() => undefined);
  if (s === undefined) throw new CatalogError('catalog_not_found', `catalog directory ${dir} does not exist`);
  if (!s.isDirectory()) throw new CatalogError('catalog_not_directory', `catalog path ${dir} is not a directory`);
  const root = await realpath(dir);
  const files = (await listEntryFiles(dir)).map(({ rel, link }): CatalogFileStat => {
    const path = join(dir, rel);
    try {
      const own = lstatSync(path, { bigint: true });
      const target = link ? statSync(path, { bigint: true, throwIfNoEntry: false }) : own;
      const times = [own.mtimeMs, own.ctimeMs, target?.mtimeMs ?? 0n, target?.ctimeMs ?? 0n];
      const changed = times.reduce((a, b) => (b > a ? b : a));
      return { rel, id: `${statId(own)}${link ? `>${target ? statId(target) : 'dangling'}` : ''}`, changedMs: Number(changed) };
    } catch (err) {
      return { rel, id: `unreadable ${(err as NodeJS.ErrnoException).code ?? String(err)}`, changedMs: Number.NaN };
    }
  });
  return { root, files };
}

/** Entry files read at once (the thread pool has four threads; a few more keep it busy). */
const READS_IN_FLIGHT = 16;

/** The entries and problems of files `readCatalogFiles` read (in its order). */
export function parseCatalogFiles(files: readonly CatalogFile[]): LoadedCatalog {
  const entries: Entry[] = [];
  const problems: LintProblem[] = [];
  const byTitle = new Map<string, string>();
  for (const { rel, text, problem } of files) {
    if (problem) problems.push(problem);
    if (text === undefined) continue;
    const parsed = parseEntry(rel, text);
    problems.push(...parsed.problems);
    if (!parsed.entry) continue;
    entries.push(parsed.entry);
    const key = parsed.entry.title.trim().toLowerCase();
    const first = byTitle.get(key);
    if (first === undefined) byTitle.set(key, rel);
    else {
      problems.push({
        file: rel, line: parsed.titleLine ?? 1, rule: 'title-duplicate', severity: 'warning',
        message: `title "${parsed.entry.title}" is also used by ${first}; make titles distinct so people can tell entries apart`,
      });
    }
  }
  return { entries, problems: problems.sort(byFileThenLine) };
}

/**
 * Load every entry under `dir` (SPEC §5): `readCatalogFiles`, then `parseCatalogFiles`. A
 * broken entry is left out with its problems recorded; only an unusable root rejects (with a
 * CatalogError).
 */
export async function loadCatalog(dir: string): Promise<LoadedCatalog> {
  return parseCatalogFiles(await readCatalogFiles(dir));
}

/**
 * Loads only the files `rels` (catalog-relative, with `/`) under `dir`, with the checks
 * `loadCatalog` applies to each file (links out of the catalog, size, encoding, parsing) — for
 * a sync that knows which files changed. Catalog-wide rules (duplicate titles) are not
 * checked here. `missing` lists the paths that are not entries any more (deleted, not a
 * candidate file, or skipped with an error).
 */
export async function loadCatalogFiles(dir: string, rels: readonly string[]): Promise<LoadedCatalog & { missing: string[] }> {
  const entries: Entry[] = [];
  const problems: LintProblem[] = [];
  const missing: string[] = [];
  const realRoot = await realpath(dir);
  for (const rel of [...new Set(rels)].sort()) {
    if (!isEntryPath(rel) || !(await insideWalk(dir, rel))) {
      missing.push(rel);
      continue;
    }
    const read = await readEntryFile(dir, realRoot, rel);
    if (read.problem) problems.push(read.problem);
    const parsed = read.text === undefined ? undefined : parseEntry(rel, read.text);
    if (parsed) problems.push(...parsed.problems);
    if (parsed?.entry) entries.push(parsed.entry);
    else missing.push(rel);
  }
  return { entries, problems: problems.sort(byFileThenLine), missing };
}

/** True when `rel` exists and every folder on its way is a real folder (the walk follows no linked folder). */
async function insideWalk(dir: string, rel: string): Promise<boolean> {
  const segs = rel.split('/');
  for (let i = 1; i < segs.length; i++) {
    const s = await lstat(join(dir, ...segs.slice(0, i))).catch(() => undefined);
    if (!s?.isDirectory()) return false;
  }
  const last = await lstat(join(dir, rel)).catch(() => undefined);
  return last !== undefined && (last.isFile() || last.isSymbolicLink());
}

/**
 * A store nobody else can read (SPEC §11, issue 20 item 6): the data folder is created 0700 and
 * every file Reprise keeps there 0600, whatever the umask. The store holds alert text and
 * operator notes; under the default umask (022) SQLite would create the database, its WAL and
 * its shared-memory file 0644, readable by every local user.
 *
 * SQLite creates `-wal` and `-shm` with the mode of the database file, so creating the database
 * file 0600 *before* SQLite opens it covers all three. A file of ours found looser (an older
 * version, a copy) is tightened; a folder that already exists is left as the operator made it
 * (it may be a mounted volume) and reported by {@link looseModes} — `serve` warns, `doctor` fails
 * with the fix.
 */
import { chmodSync, closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `dir` (and missing parents) 0700; an existing folder is not changed. */
export function ensurePrivateDir(dir: string): void {
  if (existsSync(dir)) return;
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  // mkdir's mode is masked by the umask, which can only remove bits: 0700 or tighter. Say it anyway.
  chmodSync(dir, PRIVATE_DIR_MODE);
}

/** Creates `file` empty and 0600 when missing; tightens it to 0600 when it is ours and looser. */
export function ensurePrivateFile(file: string): void {
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
  tighten(file);
}

/** Tightens `file` to 0600 when it exists, is ours, and is readable or writable by others. */
export function tighten(file: string): void {
  let st;
  try {
    st = lstatSync(file);
  } catch {
    return;
  }
  if (st.isSymbolicLink() || (st.mode & 0o077) === 0) return;
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) return;
  chmodSync(file, st.mode & 0o7700 & ~0o077);
}

/** A file or folder others can read or write, and the command that fixes it. */
export interface LooseMode {
  path: string;
  mode: string;
  fix: string;
}

const octal = (mode: number): string => (mode & 0o7777).toString(8).padStart(4, '0');

/**
 * What others can reach in `dataDir`: the folder itself (any group or other bits), and every
 * file directly inside it (the store, its WAL and shared memory, the lock, the control socket,
 * `serve.json`, exports or transcripts kept there). Sub-folders (the catalog clone) are
 * protected by the folder. `extra` adds files elsewhere (a store file outside the data dir).
 */
export function looseModes(dataDir: string, extra: readonly string[] = []): LooseMode[] {
  const out: LooseMode[] = [];
  const dir = resolve(dataDir);
  let st;
  try {
    st = statSync(dir);
  } catch {
    return out;
  }
  if (st.isDirectory() && (st.mode & 0o077) !== 0) out.push({ path: dir, mode: octal(st.mode), fix: `chmod 700 ${dir}` });
  const files = new Set(extra.map((f) => resolve(f)));
  try {
    for (const name of readdirSync(dir)) files.add(join(dir, name));
  } catch {
    // An unreadable folder is reported by the writability check.
  }
  for (const f of [...files].sort()) {
    try {
      const s = lstatSync(f);
      if (s.isDirectory() || s.isSymbolicLink()) continue;
      if ((s.mode & 0o077) !== 0) out.push({ path: f, mode: octal(s.mode), fix: `chmod 600 ${f}` });
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

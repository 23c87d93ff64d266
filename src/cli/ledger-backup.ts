/**
 * `reprise ledger export|import`: backups of the ledger as JSON lines (issue 7 item 6). The
 * format, the checks and the writing live in core/ledger/ledger-backup.ts; this file is the
 * files, the store's writer lock (or Redis leader lease) and the messages.
 */
import { createReadStream, existsSync, statSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Config } from '../config/schema.js';
import { isRepriseError } from '../core/errors.js';
import { exportLedger, importLedger } from '../core/ledger/ledger-backup.js';
import { describeAggregates } from '../core/ledger/ledger-export-format.js';
import type { Fence, KeyValueStore, LeaderLease } from '../ports/store.js';
import { parseCli } from './args.js';
import { loadCliConfig, STORE_SECTIONS } from './cli-config.js';
import type { CliIO } from '../runtime/cli-io.js';
import { describeVerification, openForReading } from '../runtime/ledger-open.js';
import { describeStore, isSharedStore, lockStore, openStore, StoreLockedError } from '../runtime/open-store.js';

/** Output written per chunk. */
const CHUNK = 64 * 1024;

/** `reprise ledger export [--out FILE]`: reads only, so it is safe beside a running bot. */
export async function exportCommand(argv: string[], io: CliIO, usage: string): Promise<number> {
  const parsed = parseCli(
    argv,
    {
      out: { type: 'string', short: 'o', description: 'write to this file instead of stdout', valueName: 'FILE' },
      config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
    },
    usage,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const { values, positionals } = parsed;
  if (positionals.length > 0) {
    io.stderr(`reprise ledger export: unexpected argument ${JSON.stringify(positionals[0])} (the file goes after --out)\nusage: ${usage}\n`);
    return 2;
  }
  const loaded = loadCliConfig(values.config, io, { sections: STORE_SECTIONS });
  if ('exit' in loaded) return loaded.exit;
  const opened = await openForReading(loaded.config, io, 'reprise ledger export');
  // No store at all is an error here: a backup job pointed at the wrong data dir must fail.
  if ('exit' in opened) return 1;
  const { store } = opened;
  const source = describeStore(loaded.config);
  const out = values.out === undefined ? undefined : resolve(io.cwd, values.out);
  const partial = out === undefined ? undefined : join(dirname(out), `.${basename(out)}.partial-${process.pid}`);
  let events = 0;
  try {
    const lines = exportLedger(store, {
      source,
      onProgress: (done, total) => io.stderr(`exported ${done}/${total} events…\n`),
    });
    if (partial === undefined || out === undefined) {
      let buffer = '';
      for await (const l of lines) {
        buffer += l;
        events++;
        if (buffer.length >= CHUNK) {
          io.stdout(buffer);
          buffer = '';
        }
      }
      io.stdout(buffer);
    } else {
      // Written whole, flushed, then renamed: a file named like the backup is always a whole one.
      const fh = await open(partial, 'wx', 0o600);
      try {
        let buffer = '';
        for await (const l of lines) {
          buffer += l;
          events++;
          if (buffer.length >= CHUNK) {
            await fh.write(buffer);
            buffer = '';
          }
        }
        await fh.write(buffer);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(partial, out);
    }
  } catch (err) {
    if (partial) await rm(partial, { force: true });
    if (!isRepriseError(err) && !isFsError(err)) throw err;
    io.stderr(`reprise ledger export: ${(err as Error).message}${out ? `; ${out} was not written` : ''}\n`);
    return 1;
  } finally {
    await store.close();
  }
  const count = Math.max(0, events - 2); // less the header and the trailer
  io.stderr(`exported ${count} event(s)${count > 0 ? ` (seq 1–${count})` : ''} from ${source}${out ? ` to ${out}` : ''}\n`);
  return 0;
}

function isFsError(err: unknown): boolean {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string' && typeof (err as NodeJS.ErrnoException).syscall === 'string';
}

/** The file's lines, read afresh each call (import reads it twice). */
function fileLines(file: string): () => AsyncIterable<string> {
  return () => createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Number.POSITIVE_INFINITY });
}

/** `reprise ledger import FILE`: into an empty store, as its only writer. */
export async function importCommand(argv: string[], io: CliIO, usage: string): Promise<number> {
  const parsed = parseCli(
    argv,
    { config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' } },
    usage,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const { values, positionals } = parsed;
  if (positionals.length !== 1) {
    io.stderr(
      `reprise ledger import: ${positionals.length === 0 ? 'which file? give the export to import' : `one file at a time, got ${positionals.length}`}\nusage: ${usage}\n`,
    );
    return 2;
  }
  if (positionals[0] === '-') {
    io.stderr('reprise ledger import: reads its file twice (checks every line before writing any), so it cannot read stdin: save the export to a file first\n');
    return 2;
  }
  const file = resolve(io.cwd, positionals[0]!);
  if (!existsSync(file) || !statSync(file).isFile()) {
    io.stderr(`reprise ledger import: ${file} is not a file\n`);
    return 2;
  }
  const loaded = loadCliConfig(values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const { config } = loaded;

  let lock;
  try {
    lock = lockStore(config, 'reprise ledger import');
  } catch (err) {
    if (!(err instanceof StoreLockedError)) throw err;
    io.stderr(`${err.message} Nothing was imported.\n`);
    return 1;
  }
  const store = openStore(config, 'write');
  let lead: Lead | undefined;
  try {
    if (isSharedStore(config)) {
      lead = await takeLead(store, config);
      if (!lead) {
        io.stderr(
          `reprise ledger import: a reprise serve replica leads ${describeStore(config)} (its leader lease is held). ` +
            `One process writes a store at a time: stop every replica (and wait store.lease_ttl), then import. Nothing was imported.\n`,
        );
        return 1;
      }
    }
    const result = await importLedger(store, fileLines(file), {
      ledger: { snapshotEvery: config.store.snapshot_every, resolveWindowMs: config.ledger.resolve_window_ms, ...(lead ? { fence: lead.fence } : {}) },
      onProgress: (done, total) => io.stderr(`imported ${done}/${total} events…\n`),
      ...(lead ? { stillOwner: lead.held } : {}),
    });
    const h = result.checked.header;
    io.stdout(`imported ${result.checked.trailer.count} event(s) from ${file} (exported ${h.exportedAt} from ${h.source}) into ${describeStore(config)}\n`);
    io.stdout(`verified: ${describeVerification(result.verification)}; the store's aggregates and digests equal the file's\n`);
    io.stdout(`aggregates: ${describeAggregates(result.aggregates)}\n`);
    return 0;
  } catch (err) {
    if (lead && !lead.held()) {
      io.stderr(
        `reprise ledger import: ${file}: the Redis leader lease was lost during the import (${(err as Error).message}): another replica may lead now, ` +
          'so what was written is left as it is. Stop every replica, empty the store, and import again.\n',
      );
      return 1;
    }
    if (!isRepriseError(err) && !isFsError(err)) throw err;
    // Refused before writing (a store that is not empty or is newer), or emptied again after.
    const untouched = isRepriseError(err) && (err.code === 'bad_request' || err.code === 'unavailable');
    const empty = untouched ? 'Nothing was imported; the store was not changed.' : 'Nothing was imported; the store is left empty.';
    io.stderr(`reprise ledger import: ${file}: ${(err as Error).message}. ${empty}\n`);
    return 1;
  } finally {
    await lead?.release();
    await store.close().catch(() => undefined);
    lock?.release();
  }
}

/** The Redis leader lease, held for the import and renewed meanwhile. */
interface Lead {
  fence: () => Fence | undefined;
  held: () => boolean;
  release(): Promise<void>;
}

async function takeLead(store: KeyValueStore, config: Config): Promise<Lead | undefined> {
  const ttl = config.store.lease_ttl_ms;
  const lease: LeaderLease | undefined = store.leaderLease?.(`import:${hostname().replace(/\|/g, '_')}:${process.pid}`, ttl);
  if (!lease) return undefined;
  const token = await lease.acquire();
  if (token === undefined) return undefined;
  let held = true;
  const timer = setInterval(
    () => {
      lease.renew(token).then(
        (ok) => {
          if (!ok) held = false;
        },
        () => {
          held = false;
        },
      );
    },
    Math.max(100, Math.floor(ttl / 3)),
  );
  timer.unref();
  return {
    fence: () => (held ? { key: lease.fenceKey, token } : undefined),
    held: () => held,
    release: async () => {
      clearInterval(timer);
      if (held) await lease.release(token).catch(() => undefined);
    },
  };
}

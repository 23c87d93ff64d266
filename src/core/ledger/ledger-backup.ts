/**
 * Backups of the ledger (issue 7 item 6): an export reads a consistent cut of the log (every
 * event up to the head read at its start; events are never rewritten) into the file format of
 * `ledger-export-format.ts`; an import checks a whole file first, then writes it into an empty
 * store through the ledger's own writer, and verifies what it wrote.
 */
import { createHash } from 'node:crypto';
import { RepriseError } from '../errors.js';
import type { LedgerEvent } from '../ledger-events.js';
import type { KeyValueStore } from '../../ports/store.js';
import { Ledger, type LedgerOptions } from './ledger.js';
import {
  addEventToDigest,
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  ExportReader,
  exportFileError,
  ledgerAggregates,
  stateDigest,
  type CheckedExport,
  type ExportHeader,
  type ExportTrailer,
  type LedgerAggregates,
} from './ledger-export-format.js';
import { eventKey, HEAD_KEY, readHead, readLedgerRecords } from './ledger-records.js';
import { applyEvent, createLedgerState } from './ledger-state.js';
import { LEDGER_STATE_VERSION } from './ledger-types.js';
import { firstDifference, verifyLedger, type LedgerVerification } from './ledger-verify.js';
import { deleteSnapshot, migrateAsWriter } from './ledger-load.js';
import {
  assertNoUnfinishedImport,
  checkStoreSchemaForReading,
  IDENTITY_KEY,
  IMPORT_MARKER_KEY,
  readStoreSchema,
  STORE_SCHEMA_KEY,
  type ImportMarker,
  type StoreSchemaRecord,
} from './store-schema.js';
import type { Fence } from '../../ports/store.js';
import type { Logger } from '../../ports/logger.js';
import { silentLogger } from '../../ports/logger.js';

/** How often progress is reported, in events. */
export const PROGRESS_EVERY = 10_000;

export interface ExportOptions {
  /** Where the events come from, for the header (no credentials). */
  source: string;
  now?: () => Date;
  /** Called every `progressEvery` events with (done, total). */
  onProgress?: (done: number, total: number) => void;
  /** Default {@link PROGRESS_EVERY}. */
  progressEvery?: number;
}

/**
 * The export's lines (each ending in a newline), read from `store` without writing anything.
 * @throws RepriseError when the store is newer than this build, or a record cannot be read
 *   (a backup must be a faithful copy; `reprise ledger verify` names the damaged records).
 */
export async function* exportLedger(store: KeyValueStore, opts: ExportOptions): AsyncGenerator<string> {
  const schema = await checkStoreSchemaForReading(store);
  const head = await readHead(store);
  const header: ExportHeader = {
    kind: 'header',
    format: EXPORT_FORMAT,
    formatVersion: EXPORT_FORMAT_VERSION,
    schemaVersion: schema.version,
    stateVersion: LEDGER_STATE_VERSION,
    exportedAt: (opts.now ?? (() => new Date()))().toISOString(),
    source: opts.source,
    headSeq: head,
  };
  yield `${JSON.stringify(header)}\n`;
  const state = createLedgerState();
  const events = createHash('sha256');
  for await (const r of readLedgerRecords(store, 0, head)) {
    if (!('event' in r)) {
      throw new RepriseError(
        'internal',
        `ledger record #${r.seq} cannot be read (${r.corrupt}); an export must hold every event. Run \`reprise ledger verify\` to list the damaged records, and restore them from an earlier backup`,
      );
    }
    applyEvent(state, r.event, r.seq);
    addEventToDigest(events, r.seq, r.event);
    yield `${JSON.stringify({ kind: 'event', seq: r.seq, event: r.event })}\n`;
    if (r.seq % (opts.progressEvery ?? PROGRESS_EVERY) === 0) opts.onProgress?.(r.seq, head);
  }
  const trailer: ExportTrailer = {
    kind: 'trailer',
    count: head,
    lastSeq: head,
    eventsSha256: events.digest('hex'),
    stateVersion: LEDGER_STATE_VERSION,
    stateSha256: stateDigest(state),
    aggregates: ledgerAggregates(state) as unknown as Record<string, unknown>,
  };
  yield `${JSON.stringify(trailer)}\n`;
}

/** Reads every line of a file once more (import reads it twice: check, then write). */
export type LineSource = () => AsyncIterable<string>;

/** Validates a whole export file without touching any store. */
export async function checkExport(lines: AsyncIterable<string>): Promise<CheckedExport> {
  const reader = new ExportReader();
  for await (const l of lines) reader.line(l);
  return reader.end();
}

export interface ImportOptions {
  /** The writer's options (snapshot interval, resolve window, fence, logger); the import migrates itself. */
  ledger?: Omit<LedgerOptions, 'migrate'>;
  /** Events per store transaction. */
  batch?: number;
  onProgress?: (done: number, total: number) => void;
  /** Default {@link PROGRESS_EVERY}. */
  progressEvery?: number;
  /** False once another process may have taken the store (a lost lease): nothing is rolled back then. */
  stillOwner?: () => boolean;
  now?: () => Date;
}

export interface ImportResult {
  checked: CheckedExport;
  verification: LedgerVerification;
  aggregates: LedgerAggregates;
}

/**
 * Imports an export into an EMPTY store: checks the whole file first (nothing written on a bad
 * one), then writes its events through the ledger's writer in batches (its snapshots are the
 * bot's), brings the store's schema to this build's, and verifies the store against the file.
 * Anything failing after the first write empties the store again.
 * @throws RepriseError naming the line and reason for a bad file; the store's state for a store that is not empty.
 */
export async function importLedger(store: KeyValueStore, read: LineSource, opts: ImportOptions = {}): Promise<ImportResult> {
  await assertNoUnfinishedImport(store);
  const status = await readStoreSchema(store);
  if (!status.empty) {
    const head = await readHead(store);
    throw new RepriseError(
      'bad_request',
      `the target store already holds a ledger (head #${head}): an import only goes into an empty store, never over or after existing events. ` +
        'Point --config at an empty store (a new store.data_dir or Redis database), or, to replace this ledger, export it first as a backup, then remove the store file (or the Redis keys) and import again',
    );
  }
  const checked = await checkExport(read());
  const log = opts.ledger?.logger ?? silentLogger;
  const fence = opts.ledger?.fence;
  const now = opts.now ?? (() => new Date());
  const write = (key: string, value: unknown, f: Fence | undefined): Promise<void> =>
    f && store.setFenced ? store.setFenced(key, value, f) : store.set(key, value);
  let wrote = false;
  try {
    // First: a crash from here on leaves a store every open refuses, never a partial ledger served.
    wrote = true;
    await write(IMPORT_MARKER_KEY, { startedAt: now().toISOString(), events: checked.trailer.count } satisfies ImportMarker, fence?.());
    // The store takes the file's schema version, then the migrations from there (none today).
    if (checked.header.schemaVersion > 0) {
      wrote = true;
      await write(STORE_SCHEMA_KEY, { version: checked.header.schemaVersion, at: now().toISOString() } satisfies StoreSchemaRecord, fence?.());
    } else if (status.recorded) {
      wrote = true;
      await store.delete(STORE_SCHEMA_KEY);
    }
    const ledger = await Ledger.open(store, { ...opts.ledger, importing: true });
    await writeEvents(ledger, read(), checked, opts);
    await ledger.close();
    await migrateAsWriter(store, fence?.(), log);
    const verification = await verifyLedger(store);
    const problem = verificationProblem(verification, checked);
    if (problem) throw new RepriseError('internal', `the imported store does not verify: ${problem}`);
    await store.delete(IMPORT_MARKER_KEY);
    return { checked, verification, aggregates: ledgerAggregates(verification.replay) };
  } catch (err) {
    if (wrote && (opts.stillOwner?.() ?? true)) await emptyStore(store, log);
    throw err;
  }
}

/** The second pass: the same file again, written in batches; a line differing from the first pass stops it. */
async function writeEvents(ledger: Ledger, lines: AsyncIterable<string>, checked: CheckedExport, opts: ImportOptions): Promise<void> {
  const reader = new ExportReader();
  const size = opts.batch ?? 500;
  const total = checked.trailer.count;
  let batch: Array<{ seq: number; event: LedgerEvent }> = [];
  let done = 0;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const events = batch;
    batch = [];
    const { first } = await ledger.transaction(async (tx) => {
      for (const e of events) tx.record(e.event);
    });
    // The store numbers events itself: anything else writing to it now would show here.
    if (first !== events[0]!.seq)
      throw new RepriseError(
        'unavailable',
        `the store numbered event ${events[0]!.seq} as #${first}: another process is writing to it; stop it and import again`,
      );
    const before = done;
    done += events.length;
    const every = opts.progressEvery ?? PROGRESS_EVERY;
    if (Math.floor(done / every) > Math.floor(before / every)) opts.onProgress?.(done, total);
  };
  for await (const l of lines) {
    const e = reader.line(l);
    if (!e) continue;
    batch.push(e);
    if (batch.length >= size) await flush();
  }
  // The trailer is checked before the last batch is written.
  const again = reader.end();
  if (again.trailer.eventsSha256 !== checked.trailer.eventsSha256) throw exportFileError(undefined, 'the file changed while it was being imported');
  await flush();
}

/** What is wrong with the imported store, if anything. */
function verificationProblem(v: LedgerVerification, checked: CheckedExport): string | undefined {
  if (v.corrupt.length > 0) return `unreadable records ${v.corrupt.slice(0, 3).join(', ')}`;
  if (v.total !== checked.trailer.count) return `it holds ${v.total} events, the file ${checked.trailer.count}`;
  if (v.snapshot === 'mismatch') return `its snapshot differs from a replay: ${v.mismatch ?? ''}`;
  const diff = firstDifference(JSON.parse(JSON.stringify(ledgerAggregates(v.replay))), checked.trailer.aggregates, '$.aggregates', 'store', 'file');
  if (diff !== undefined) return `its aggregates differ from the file's: ${diff}`;
  if (checked.trailer.stateVersion === LEDGER_STATE_VERSION && stateDigest(v.replay) !== checked.trailer.stateSha256)
    return "its replayed state's digest differs from the file's";
  return undefined;
}

/** Removes what an import wrote (it owns the store, which was empty before it). */
async function emptyStore(store: KeyValueStore, log: Logger): Promise<void> {
  try {
    const head = await readHead(store).catch(() => 0);
    for (let s = 1; s <= head; s++) await store.delete(eventKey(s));
    await deleteSnapshot(store);
    await store.delete(HEAD_KEY);
    await store.delete(STORE_SCHEMA_KEY);
    await store.delete(IDENTITY_KEY);
    await store.delete(IMPORT_MARKER_KEY);
  } catch (err) {
    log.error({ err }, 'could not empty the store after a failed import; remove its file (or keys) before importing again');
    throw new RepriseError(
      'internal',
      `the import failed and the store could not be emptied again (${(err as Error).message}): remove the store before importing again`,
      { cause: err },
    );
  }
}

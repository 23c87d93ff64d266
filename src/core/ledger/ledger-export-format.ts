/**
 * The ledger export file (issue 7 item 6): JSON lines — a header, one line per event in seq
 * order, and a trailer carrying what an import checks the file against (count, a digest of the
 * events, the aggregates of a replay and a digest of the replayed state).
 *
 * ```
 * {"kind":"header","format":"reprise-ledger-export","formatVersion":1,"schemaVersion":1,…}
 * {"kind":"event","seq":1,"event":{"type":"open",…}}
 * …
 * {"kind":"trailer","count":N,"lastSeq":N,"eventsSha256":"…","aggregates":{…},…}
 * ```
 *
 * {@link ExportReader} validates a file line by line, replaying it as it goes, and names the
 * first line that is wrong and why; nothing is written until a whole file has passed it.
 */
import { createHash, type Hash } from 'node:crypto';
import { z } from 'zod';
import { RepriseError } from '../errors.js';
import type { LedgerEvent } from '../ledger-events.js';
import { ledgerEventProblem } from './ledger-event-problem.js';
import { applyEvent, createLedgerState } from './ledger-state.js';
import { LEDGER_STATE_VERSION, type EntryAggregate, type LedgerState } from './ledger-types.js';
import { firstDifference } from './ledger-verify.js';
import { STORE_SCHEMA_VERSION } from './store-schema.js';

export const EXPORT_FORMAT = 'reprise-ledger-export';
/** The file layout this build writes and the newest it reads. */
export const EXPORT_FORMAT_VERSION = 1;

const count = z.number().int().nonnegative();
const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha256 in hex');
/** A plain JSON object, kept as parsed (a copy would drop a key such as `__proto__`). */
const jsonObject = z.custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), 'must be an object');

export const exportHeaderSchema = z.strictObject({
  kind: z.literal('header'),
  format: z.literal(EXPORT_FORMAT),
  formatVersion: z.number().int().positive(),
  /** The store schema version the events were read from (0: written before it was recorded). */
  schemaVersion: count,
  /** The read model version of the build that exported (its state digest is comparable only at the same one). */
  stateVersion: z.number().int().positive(),
  exportedAt: z.iso.datetime({ offset: true }),
  /** Where the events came from, for people (no credentials). */
  source: z.string(),
  /** The store's head when the export started: the cut it holds. */
  headSeq: count,
});
export type ExportHeader = z.infer<typeof exportHeaderSchema>;

export const exportEventSchema = z.strictObject({
  kind: z.literal('event'),
  seq: z.number().int().positive(),
  // One rule for what an event is: the ledger's schema, which its writer enforces before it
  // writes. The event is kept as read (a parsed copy would drop fields it does not know, and
  // the digest is over what the file holds).
  event: z.custom<LedgerEvent>().superRefine((v, ctx) => {
    const problem = ledgerEventProblem(v);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  }),
});

export const exportTrailerSchema = z.strictObject({
  kind: z.literal('trailer'),
  count,
  lastSeq: count,
  /** sha256 over `seq TAB event-json LF` of every event, in order. */
  eventsSha256: sha256,
  stateVersion: z.number().int().positive(),
  /** sha256 of the replayed state's JSON (comparable at the same `stateVersion`). */
  stateSha256: sha256,
  aggregates: jsonObject,
});
export type ExportTrailer = z.infer<typeof exportTrailerSchema>;

/** What the trailer carries of a replay: the reads SPEC §8 names, per entry and per trigger. */
export interface LedgerAggregates {
  applied: number;
  resolves: number;
  entries: Record<string, EntryAggregate>;
  triggers: Record<string, { count: number; resolved: number; up: number; down: number; firstSeen?: string; lastSeen?: string; lastKbLink?: string }>;
}

/** The per-entry aggregates and per-trigger occurrences of a state, as plain JSON. */
export function ledgerAggregates(state: LedgerState): LedgerAggregates {
  const entries = Object.create(null) as LedgerAggregates['entries'];
  for (const [k, a] of Object.entries(state.entries)) entries[k] = a;
  const triggers = Object.create(null) as LedgerAggregates['triggers'];
  for (const [k, t] of Object.entries(state.triggers)) {
    triggers[k] = {
      count: t.count,
      resolved: t.resolved,
      up: t.up,
      down: t.down,
      ...(t.firstSeen === undefined ? {} : { firstSeen: t.firstSeen }),
      ...(t.lastSeen === undefined ? {} : { lastSeen: t.lastSeen }),
      ...(t.lastKbLink === undefined ? {} : { lastKbLink: t.lastKbLink }),
    };
  }
  return { applied: state.applied, resolves: state.resolves, entries, triggers };
}

export function stateDigest(state: LedgerState): string {
  return createHash('sha256').update(JSON.stringify(state)).digest('hex');
}

/** The running digest of the events, the same on export and on import. */
export function addEventToDigest(hash: Hash, seq: number, event: unknown): void {
  hash.update(`${seq}\t${JSON.stringify(event)}\n`);
}

/** One summary line of aggregates, for people. */
export function describeAggregates(a: LedgerAggregates): string {
  let recalls = 0;
  let resolved = 0;
  let up = 0;
  let down = 0;
  let confirmations = 0;
  for (const e of Object.values(a.entries)) {
    recalls += e.recalls;
    resolved += e.resolved;
    up += e.up;
    down += e.down;
    confirmations += e.confirmations;
  }
  return `${Object.keys(a.entries).length} entries (recalls ${recalls}, resolved ${resolved}, 👍 ${up}, 👎 ${down}, confirmations ${confirmations}), ${Object.keys(a.triggers).length} triggers, ${a.resolves} resolves, ${a.applied} events applied`;
}

/** A file refused: which line, and why. */
export function exportFileError(line: number | undefined, reason: string): RepriseError {
  const message = line === undefined ? reason : `line ${line}: ${reason}`;
  return new RepriseError('invalid_payload', message, { userMessage: message, ...(line === undefined ? {} : { details: { line } }) });
}

function zodReason(err: z.ZodError): string {
  return err.issues
    .slice(0, 3)
    .map((i) => `${i.path.length > 0 ? `${i.path.join('.')}: ` : ''}${i.message}`)
    .join('; ');
}

/** What a whole valid file holds. */
export interface CheckedExport {
  header: ExportHeader;
  trailer: ExportTrailer;
  /** Lines read (header and trailer included). */
  lines: number;
  /** The replay of the file's events. */
  state: LedgerState;
}

/**
 * Validates an export one line at a time, replaying its events: feed every line to
 * {@link line} (it returns the event a line holds), then call {@link end}.
 * @throws RepriseError naming the line and the reason, at the first line that is wrong.
 */
export class ExportReader {
  #line = 0;
  #header: ExportHeader | undefined;
  #trailer: ExportTrailer | undefined;
  #trailerLine = 0;
  #lastSeq = 0;
  #events = createHash('sha256');
  readonly #state = createLedgerState();

  /** Events read so far. */
  get count(): number {
    return this.#lastSeq;
  }

  get header(): ExportHeader | undefined {
    return this.#header;
  }

  line(text: string): { seq: number; event: LedgerEvent } | undefined {
    const n = ++this.#line;
    if (this.#trailer) throw exportFileError(n, `a line after the trailer (line ${this.#trailerLine}): the file has more than one export, or was appended to`);
    if (text.trim() === '') throw exportFileError(n, 'an empty line: an export has none');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw exportFileError(n, `not JSON (${(err as Error).message})${n === 1 ? ': this is not a reprise ledger export' : ': the file is damaged'}`);
    }
    const kind = (value as { kind?: unknown } | null)?.kind;
    if (!this.#header) {
      if (kind !== 'header')
        throw exportFileError(
          n,
          `expected the export header ({"kind":"header","format":"${EXPORT_FORMAT}",…}), got ${JSON.stringify(text.slice(0, 60))}: this is not a reprise ledger export, or its start is missing`,
        );
      this.#header = this.#parseHeader(value, n);
      return undefined;
    }
    if (kind === 'event') return this.#event(value, n);
    if (kind === 'trailer') {
      const parsed = exportTrailerSchema.safeParse(value);
      if (!parsed.success) throw exportFileError(n, `the trailer is malformed: ${zodReason(parsed.error)}`);
      this.#trailer = parsed.data;
      this.#trailerLine = n;
      return undefined;
    }
    if (kind === 'header') throw exportFileError(n, 'a second header: two exports were joined into one file');
    throw exportFileError(n, `unknown line kind ${JSON.stringify(kind)} (expected "event" or "trailer")`);
  }

  #parseHeader(value: unknown, n: number): ExportHeader {
    const v = value as Record<string, unknown>;
    if (v['format'] !== EXPORT_FORMAT)
      throw exportFileError(n, `format ${JSON.stringify(v['format'])} is not ${JSON.stringify(EXPORT_FORMAT)}: this is not a reprise ledger export`);
    if (typeof v['formatVersion'] === 'number' && v['formatVersion'] > EXPORT_FORMAT_VERSION) {
      throw exportFileError(
        n,
        `export format version ${v['formatVersion']} was written by a newer reprise (this build reads up to ${EXPORT_FORMAT_VERSION}): upgrade reprise to import it`,
      );
    }
    if (typeof v['schemaVersion'] === 'number' && v['schemaVersion'] > STORE_SCHEMA_VERSION) {
      throw exportFileError(
        n,
        `the events come from a store at schema version ${v['schemaVersion']}, newer than this build knows (${STORE_SCHEMA_VERSION}): upgrade reprise to import them`,
      );
    }
    const parsed = exportHeaderSchema.safeParse(value);
    if (!parsed.success) throw exportFileError(n, `the header is malformed: ${zodReason(parsed.error)}`);
    return parsed.data;
  }

  #event(value: unknown, n: number): { seq: number; event: LedgerEvent } {
    const parsed = exportEventSchema.safeParse(value);
    if (!parsed.success) throw exportFileError(n, `not a valid event line: ${zodReason(parsed.error)}`);
    const { seq, event } = parsed.data;
    const expected = this.#lastSeq + 1;
    if (seq !== expected) {
      throw exportFileError(n, `event seq ${seq} where ${expected} was expected: lines are missing, repeated or out of order`);
    }
    if (seq > this.#header!.headSeq) throw exportFileError(n, `event seq ${seq} is past the header's head (${this.#header!.headSeq})`);
    this.#lastSeq = seq;
    addEventToDigest(this.#events, seq, event);
    applyEvent(this.#state, event, seq);
    return { seq, event };
  }

  /** Checks the file is whole and agrees with its trailer. */
  end(): CheckedExport {
    const header = this.#header;
    if (!header) throw exportFileError(undefined, 'the file is empty: not a reprise ledger export');
    const trailer = this.#trailer;
    if (!trailer) {
      throw exportFileError(
        undefined,
        `the file ends at line ${this.#line} without its trailer: it is truncated (an export cut short, or a partial copy); take the export again`,
      );
    }
    const at = this.#trailerLine;
    if (trailer.count !== this.#lastSeq) throw exportFileError(at, `the trailer counts ${trailer.count} event(s), the file holds ${this.#lastSeq}`);
    if (trailer.lastSeq !== this.#lastSeq || this.#lastSeq !== header.headSeq) {
      throw exportFileError(
        at,
        `the file holds events up to seq ${this.#lastSeq}, the header's head is ${header.headSeq} and the trailer's last seq ${trailer.lastSeq}: events are missing`,
      );
    }
    if (this.#events.digest('hex') !== trailer.eventsSha256) {
      throw exportFileError(at, "the events' digest does not match the trailer's: an event was changed after the export");
    }
    const replayed = JSON.parse(JSON.stringify(ledgerAggregates(this.#state))) as unknown;
    const diff = firstDifference(trailer.aggregates, replayed, '$.aggregates', 'trailer', 'replay');
    if (diff !== undefined) throw exportFileError(at, `the aggregates of a replay differ from the trailer's: ${diff}`);
    if (trailer.stateVersion === LEDGER_STATE_VERSION && stateDigest(this.#state) !== trailer.stateSha256) {
      throw exportFileError(at, "the replayed state's digest differs from the trailer's");
    }
    return { header, trailer, lines: this.#line, state: this.#state };
  }
}

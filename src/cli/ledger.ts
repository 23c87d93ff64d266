import { existsSync } from 'node:fs';
import { createStore, embeddedStoreFile } from '../adapters/keyv/keyv-store.js';
import type { Config } from '../config/schema.js';
import { tryParseDuration } from '../core/duration.js';
import type { LedgerEvent } from '../core/ledger-events.js';
import { readLedgerRecords, SNAPSHOT_KEY, snapshotState } from '../core/ledger/ledger.js';
import { applyEvent, createLedgerState, restoreLedgerState } from '../core/ledger/ledger-state.js';
import type { KeyValueStore } from '../ports/store.js';
import { parseCli, wantsHelp } from './args.js';
import { loadCliConfig } from './cli-config.js';
import type { CliCommand, CliIO } from './io.js';
import { describeStore } from './store-context.js';

const USAGE = `reprise ledger events [--trigger KEY] [--since TIME] [--json] [--config FILE]
       reprise ledger verify [--config FILE]

events   every recorded event in order, one per line (with --json, one JSON object per line:
         seq, type and the event's fields). --trigger keeps one trigger's events (its resolves
         and deliveries included); --since keeps events at or after TIME (RFC 3339, or a
         duration such as 2h meaning "the last 2 hours"). Safe while the bot runs: it only reads.
verify   replays the whole log and checks the stored snapshot's aggregates against the replay;
         exit 1 on a mismatch or a record that cannot be read.`;

/** `reprise ledger events|verify`: what did the bot record, and why. */
export const ledgerCommand: CliCommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === 'help' || sub === '--help' || sub === '-h' || (sub !== 'events' && sub !== 'verify' && wantsHelp(rest))) {
    if (sub === undefined) {
      io.stderr(`usage: ${USAGE}\n`);
      return 2;
    }
    io.stdout(`usage: ${USAGE}\n`);
    return 0;
  }
  if (sub === 'events') return events(rest, io);
  if (sub === 'verify') return verify(rest, io);
  io.stderr(`reprise ledger: unknown subcommand ${JSON.stringify(sub)}\nusage: ${USAGE}\n`);
  return 2;
};

/** Opens the configured store for reading; undefined (with a message) when there is no ledger yet. */
function openForReading(config: Config, io: CliIO): KeyValueStore | undefined {
  const file = embeddedStoreFile(config.store.url, config.store.data_dir);
  if (file !== undefined && !existsSync(file)) {
    io.stderr(`reprise ledger: no ledger at ${file} yet (nothing recorded); set REPRISE_DATA_DIR or --config to read another\n`);
    return undefined;
  }
  return createStore(config.store.url, config.store.data_dir);
}

/** `--since`: an RFC 3339 time, or a duration back from now. */
function parseSince(text: string, now: Date): number | undefined {
  const ms = tryParseDuration(text);
  if (ms !== undefined) return now.getTime() - ms;
  const t = Date.parse(text);
  return Number.isNaN(t) ? undefined : t;
}

/** The trigger an event is about, following opens by fingerprint and by id as the log goes. */
function triggerOf(e: LedgerEvent, seen: Map<string, string>): string | undefined {
  switch (e.type) {
    case 'open':
      seen.set(`fp:${e.fingerprint}`, e.triggerKey);
      if (e.id !== undefined) seen.set(`open:${e.id}`, e.triggerKey);
      return e.triggerKey;
    case 'feedback':
    case 'silence':
    case 'note':
    case 'finding':
    case 'noise':
    case 'curate':
    case 'curated':
      return e.triggerKey;
    case 'resolve':
      return e.triggerKey ?? seen.get(`fp:${e.fingerprint}`);
    case 'delivered':
      return seen.get(`open:${e.openId}`) ?? seen.get(`fp:${e.fingerprint}`);
    case 'outbox':
      if (e.openId === undefined) return undefined;
      seen.set(`outbox:${e.id}`, seen.get(`open:${e.openId}`) ?? '');
      return seen.get(`open:${e.openId}`);
    case 'outbox_failed':
      return seen.get(`outbox:${e.id}`) || undefined;
    case 'confirm':
      return undefined;
  }
}

/** One event as a human reads it: seq, time, type, then its fields. */
function humanLine(seq: number, e: LedgerEvent): string {
  const { type, at, ...fields } = e as LedgerEvent & Record<string, unknown>;
  // A held firing carries the whole alert (for its release); one line names it instead.
  if (e.type === 'noise' && e.incident) fields['incident'] = `${String(e.incident['alertname'] ?? '?')} (${Object.keys(e.incident).length} fields; --json shows it)`;
  const rest = Object.entries(fields)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? JSON.stringify(v).slice(1, -1) : JSON.stringify(v)}`)
    .join(' ');
  return `#${seq} ${at} ${type} ${rest}`;
}

async function events(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseCli(argv, { trigger: { type: 'string' }, since: { type: 'string' }, json: { type: 'boolean' }, config: { type: 'string', short: 'c' } }, USAGE, io);
  if ('exit' in parsed) return parsed.exit;
  const { values, positionals } = parsed;
  if (positionals.length > 0) {
    io.stderr(`reprise ledger events: unexpected argument ${JSON.stringify(positionals[0])}\nusage: ${USAGE}\n`);
    return 2;
  }
  const since = values.since === undefined ? undefined : parseSince(values.since, new Date());
  if (values.since !== undefined && since === undefined) {
    io.stderr(`reprise ledger events: --since must be an RFC 3339 time or a duration like 2h, got ${JSON.stringify(values.since)}\n`);
    return 2;
  }
  const loaded = loadCliConfig(values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const store = openForReading(loaded.config, io);
  if (!store) return 0;
  const byFingerprint = new Map<string, string>();
  let shown = 0;
  let corrupt = 0;
  try {
    let buffer = '';
    for await (const r of readLedgerRecords(store)) {
      if (!('event' in r)) {
        corrupt++;
        buffer += values.json ? `${JSON.stringify({ seq: r.seq, corrupt: r.corrupt })}\n` : `#${r.seq} (unreadable: ${r.corrupt})\n`;
      } else {
        const trigger = triggerOf(r.event, byFingerprint);
        if (values.trigger !== undefined && trigger !== values.trigger) continue;
        if (since !== undefined && Date.parse(r.event.at) < since) continue;
        shown++;
        buffer += values.json ? `${JSON.stringify({ seq: r.seq, ...r.event })}\n` : `${humanLine(r.seq, r.event)}\n`;
      }
      if (buffer.length > 64 * 1024) {
        io.stdout(buffer);
        buffer = '';
      }
    }
    io.stdout(buffer);
  } finally {
    await store.close();
  }
  if (!values.json) io.stderr(`${shown} event(s)${corrupt > 0 ? `, ${corrupt} unreadable record(s)` : ''} from ${describeStore(loaded.config)}\n`);
  return 0;
}

/** First path where two JSON values differ, for the mismatch message. */
function firstDifference(a: unknown, b: unknown, path = '$'): string | undefined {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return JSON.stringify(a) === JSON.stringify(b) ? undefined : `${path}: stored ${JSON.stringify(a)?.slice(0, 120)}, replay ${JSON.stringify(b)?.slice(0, 120)}`;
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
    if (d) return d;
  }
  return undefined;
}

async function verify(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseCli(argv, { config: { type: 'string', short: 'c' } }, USAGE, io);
  if ('exit' in parsed) return parsed.exit;
  const loaded = loadCliConfig(parsed.values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const store = openForReading(loaded.config, io);
  if (!store) return 0;
  try {
    const snap = await store.get<{ seq: number; json?: string; state?: unknown }>(SNAPSHOT_KEY).catch(() => undefined);
    const stored = snap ? restoreLedgerState(snapshotState(snap)) : undefined;
    const limits = stored?.limits;
    const replay = createLedgerState(limits);
    let checked = false;
    let total = 0;
    const corrupt: string[] = [];
    let mismatch: string | undefined;
    for await (const r of readLedgerRecords(store)) {
      total = r.seq;
      if ('event' in r) applyEvent(replay, r.event, r.seq);
      else {
        replay.skipped += 1;
        corrupt.push(`#${r.seq}: ${r.corrupt}`);
      }
      if (stored && snap && r.seq === snap.seq) {
        mismatch = firstDifference(JSON.parse(JSON.stringify(stored)), JSON.parse(JSON.stringify(replay)));
        checked = true;
      }
    }
    io.stdout(`replayed ${total} event(s) from ${describeStore(loaded.config)}\n`);
    for (const c of corrupt) io.stdout(`unreadable record ${c}\n`);
    if (!snap) io.stdout('no stored snapshot yet: nothing to compare (the bot writes one every store.snapshot_every events and on shutdown)\n');
    else if (!stored) io.stdout(`the stored snapshot (seq ${snap.seq}) is of an older format: it is ignored at load, and rewritten at the next snapshot\n`);
    else if (!checked) io.stdout(`the stored snapshot claims seq ${snap.seq}, past the log's end (${total}): it is ignored at load\n`);
    else if (mismatch) io.stdout(`MISMATCH between the stored aggregates (seq ${snap.seq}) and a replay: ${mismatch}\n`);
    else io.stdout(`stored aggregates at seq ${snap.seq} match a replay of the log\n`);
    return mismatch || corrupt.length > 0 ? 1 : 0;
  } finally {
    await store.close();
  }
}

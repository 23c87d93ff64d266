import { tryParseDuration } from '../core/duration.js';
import type { LedgerEvent } from '../core/ledger-events.js';
import { terminalSafe } from '../core/render/escape-text.js';
import { readLedgerRecords } from '../core/ledger/ledger.js';
import { verifyLedger } from '../core/ledger/ledger-verify.js';
import { parseCli, wantsHelp } from './args.js';
import { loadCliConfig, STORE_SECTIONS } from './cli-config.js';
import type { CliCommand, CliIO } from '../runtime/cli-io.js';
import { exportCommand, importCommand } from './ledger-backup.js';
import { describeSchema, describeVerification, openForReading } from '../runtime/ledger-open.js';
import { describeStore } from '../runtime/open-store.js';

export const LEDGER_USAGE = `reprise ledger events [--trigger KEY] [--since TIME] [--json] [--config FILE]
       reprise ledger verify [--config FILE]
       reprise ledger export [--out FILE] [--config FILE]
       reprise ledger import FILE [--config FILE]

events   every recorded event in order, one per line (with --json, one JSON object per line:
         seq, type and the event's fields). --trigger keeps one trigger's events (its resolves
         and deliveries included); --since keeps events at or after TIME (RFC 3339, or a
         duration such as 2h meaning "the last 2 hours"). Safe while the bot runs: it only reads.
verify   replays the whole log and checks the stored snapshot's aggregates against the replay;
         exit 1 on a mismatch or a record that cannot be read. Also says the store's schema version.
export   a backup of the ledger as JSON lines (to FILE, written whole then renamed into place,
         or to stdout): a header, every event up to the head read at the start with its seq,
         and a trailer with the count and the aggregates of a replay. Safe while the bot runs:
         it only reads. Progress goes to stderr. Exit 1 when a record cannot be read.
import   loads an export into an EMPTY store (refused when the store holds a ledger, or while
         a bot holds the store's writer lock or Redis leader lease). Every line is checked
         (header, event shapes, contiguous seqs, trailer count, digests and aggregates) before
         anything is written; the events then go through the ledger's writer, and the store
         is verified like \`ledger verify\`. A bad file is refused with its line number and
         the reason, and the store is left empty. See docs/backups-and-upgrades.md.`;

const USAGE = LEDGER_USAGE;
const SUBCOMMANDS = ['events', 'verify', 'export', 'import'];

/** `reprise ledger events|verify|export|import`: what did the bot record, and why; backups. */
export const ledgerCommand: CliCommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === 'help' || sub === '--help' || sub === '-h' || (!SUBCOMMANDS.includes(sub) && wantsHelp(rest))) {
    if (sub === undefined) {
      io.stderr(`usage: ${USAGE}\n`);
      return 2;
    }
    io.stdout(`usage: ${USAGE}\n`);
    return 0;
  }
  if (sub === 'events') return events(rest, io);
  if (sub === 'verify') return verify(rest, io);
  if (sub === 'export') return exportCommand(rest, io, USAGE);
  if (sub === 'import') return importCommand(rest, io, USAGE);
  io.stderr(`reprise ledger: unknown subcommand ${JSON.stringify(sub)}\nusage: ${USAGE}\n`);
  return 2;
};

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
    case 'fix':
    case 'question':
    case 'question_answered':
    case 'postmortem':
    case 'ack':
    case 'refusal':
    case 'oncall_reminder':
    case 'oncall_found':
      return e.triggerKey;
    case 'pagerduty_call':
      return e.openId === undefined ? undefined : seen.get(`open:${e.openId}`);
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
  if (e.type === 'noise' && e.incident)
    fields['incident'] = `${String(e.incident['alertname'] ?? '?')} (${Object.keys(e.incident).length} fields; --json shows it)`;
  const rest = Object.entries(fields)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? JSON.stringify(v).slice(1, -1) : JSON.stringify(v)}`)
    .join(' ');
  return `#${seq} ${at} ${type} ${rest}`;
}

async function events(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseCli(
    argv,
    {
      trigger: { type: 'string', description: "only this trigger's events", valueName: 'KEY' },
      since: { type: 'string', description: 'only events since an RFC 3339 time or a duration ago (2h)', valueName: 'TIME' },
      json: { type: 'boolean', description: 'print JSON instead of text' },
      config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
    },
    USAGE,
    io,
  );
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
  const loaded = loadCliConfig(values.config, io, { sections: STORE_SECTIONS });
  if ('exit' in loaded) return loaded.exit;
  const opened = await openForReading(loaded.config, io);
  if ('exit' in opened) return opened.exit;
  const { store } = opened;
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
        // Alert text and notes are untrusted: bidi overrides, zero-width and tag characters are
        // printed as \uXXXX escapes (JSON stays valid and means the same).
        buffer += terminalSafe(values.json ? `${JSON.stringify({ seq: r.seq, ...r.event })}\n` : `${humanLine(r.seq, r.event)}\n`);
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

async function verify(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseCli(
    argv,
    { config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' } },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const loaded = loadCliConfig(parsed.values.config, io, { sections: STORE_SECTIONS });
  if ('exit' in loaded) return loaded.exit;
  const opened = await openForReading(loaded.config, io);
  if ('exit' in opened) return opened.exit;
  const { store, schema } = opened;
  try {
    const v = await verifyLedger(store);
    io.stdout(`replayed ${v.total} event(s) from ${describeStore(loaded.config)}\n`);
    io.stdout(`${describeSchema(schema)}\n`);
    for (const c of v.corrupt) io.stdout(`unreadable record ${c}\n`);
    io.stdout(`${describeVerification(v)}\n`);
    return v.snapshot === 'mismatch' || v.corrupt.length > 0 ? 1 : 0;
  } finally {
    await store.close();
  }
}

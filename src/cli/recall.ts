import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseAlertmanagerPayload } from '../core/alertmanager.js';
import { isRepriseError } from '../core/errors.js';
import { LedgerReader } from '../core/ledger/ledger-reader.js';
import { Ledger } from '../core/ledger/ledger.js';
import { recall, type TrackLookup } from '../core/recall/recall.js';
import { recallReport } from '../core/recall/recall-report.js';
import { createStore, embeddedStoreFile } from '../adapters/keyv/keyv-store.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import { catalogFolder, loadSnapshot } from '../runtime/open-catalog.js';
import type { CliCommand } from './io.js';
import { recallOptions } from '../runtime/recall-options.js';

const USAGE = 'reprise recall [--catalog DIR] [--store URL] (--alert FILE | -) [--json]';

/**
 * `reprise recall`: what recall answers for an Alertmanager payload, with the gate trace.
 * Read-only: it records nothing, so it is safe against a live bot's store.
 */
export const recallCommand: CliCommand = async (argv, io) => {
  const args = parseCli(
    argv,
    {
      catalog: { type: 'string', description: 'catalog directory (default: the configured or bundled catalog)', valueName: 'DIR' },
      store: { type: 'string', description: 'ledger store URL (default: the configured store)', valueName: 'URL' },
      alert: { type: 'string', description: 'Alertmanager webhook payload file, or - for stdin', valueName: 'FILE' },
      json: { type: 'boolean', description: 'print JSON instead of text' },
      config: { type: 'string', description: 'config file (default: $REPRISE_CONFIG)', valueName: 'FILE' },
    },
    USAGE,
    io,
  );
  if ('exit' in args) return args.exit;
  const { values, positionals } = args;
  const fromStdin = positionals.includes('-') || values.alert === '-';
  if (!values.alert && !fromStdin) {
    io.stderr(`reprise recall: give the alert payload with --alert FILE or - for standard input\nusage: ${USAGE}\n`);
    return 2;
  }
  let body: unknown;
  try {
    const raw = fromStdin ? await io.stdin() : await readFile(resolve(io.cwd, values.alert!), 'utf8');
    body = JSON.parse(raw);
  } catch (err) {
    io.stderr(`reprise recall: cannot read the alert payload: ${(err as Error).message}\n`);
    return 2;
  }
  const loaded = loadCliConfig(values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const { config } = loaded;
  let incidents;
  try {
    incidents = parseAlertmanagerPayload(body, { identity: { labels: config.identity.labels } }).incidents;
  } catch (err) {
    io.stderr(`reprise recall: ${isRepriseError(err) ? err.message : String(err)}\n`);
    return 2;
  }
  const { snapshot, skipped } = await loadSnapshot(catalogFolder(config, values.catalog ? resolve(io.cwd, values.catalog) : undefined).dir);
  for (const p of skipped) io.stderr(`warning: skipped ${p.file}:${p.line} (${p.rule}): ${p.message}\n`);
  let track: TrackLookup;
  let close = async (): Promise<void> => {};
  const dataDir = resolve(io.cwd, io.env['REPRISE_DATA_DIR'] ?? 'data');
  const file = values.store ? embeddedStoreFile(values.store, dataDir) : undefined;
  if (values.store && file !== undefined && !existsSync(file)) {
    io.stderr(`reprise recall: no ledger at ${file}; check --store (recall only reads a store, it never creates one)\n`);
    return 2;
  }
  if (values.store) {
    // Read-only: the running bot is the store's one writer (sqlite would otherwise tidy expired rows).
    const store = createStore(values.store, dataDir, { readOnly: true });
    const ledger = await Ledger.open(store, { resolveWindowMs: config.ledger.resolve_window_ms });
    track = (entry, kind) => ledger.read.trackRecord(entry, kind);
    close = async () => store.close();
  } else {
    const empty = LedgerReader.empty(config.ledger.resolve_window_ms);
    track = (entry, kind) => empty.trackRecord(entry, kind);
  }
  try {
    const opts = recallOptions(config);
    const now = new Date();
    // Which labels made the identity (and so the trigger key) beside what recall decided.
    const out = incidents.map((i) => ({
      ...recallReport(i, recall(i, snapshot, track, opts, now)),
      identity: { ...(i.identity ?? { basis: 'none', labels: [] }), ...(i.workload ? { workload: i.workload } : {}) },
    }));
    if (values.json) {
      io.stdout(`${JSON.stringify({ incidents: out }, null, 2)}\n`);
    } else {
      for (const o of out) {
        const from = o.identity.labels.length > 0 ? ` (from ${o.identity.labels.join(', ')})` : '';
        io.stdout(`${o.triggerKey}\n  identity: ${o.identity.basis}${from}\n`);
        io.stdout(`  answer: ${o.answer ? `${o.answer.kind} ${o.answer.entry} @ ${o.answer.confidence}` : 'none'}\n`);
        if (o.nearMiss) io.stdout(`  near miss: ${o.nearMiss.entry} (${o.nearMiss.gate}: ${o.nearMiss.reason})\n`);
        for (const t of o.trace) io.stdout(`  ${t.passed ? '✓' : '✗'} ${t.gate} ${t.entry ?? ''} — ${t.reason}\n`);
      }
    }
    return 0;
  } finally {
    await close();
  }
};

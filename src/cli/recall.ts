import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { GitMirror } from '../adapters/git/git-mirror.js';
import type { Config } from '../config/schema.js';
import { parseAlertmanagerPayload } from '../core/alertmanager.js';
import { isRepriseError } from '../core/errors.js';
import { recall } from '../core/recall/recall.js';
import { recallReport } from '../core/recall/recall-report.js';
import { silentLogger } from '../ports/logger.js';
import { loadSnapshot } from '../runtime/open-catalog.js';
import { openReadOnlyLedger } from '../runtime/read-only-ledger.js';
import { recallOptions } from '../runtime/recall-options.js';
import { servedCatalogFolder, type ServedFolder } from '../runtime/served-catalog.js';
import { parseCli } from './args.js';
import { loadCliConfig, RECALL_SECTIONS } from './cli-config.js';
import type { CliCommand, CliIO } from '../runtime/cli-io.js';
import { storeArg } from './store-arg.js';

const USAGE = `reprise recall (--alert FILE | -) [--json] [--config FILE] [--catalog DIR] [--store URL|DIR]

What recall answers for an Alertmanager payload, with the gate trace: from the catalog the bot
serves (its git clone when catalog.git is set, else catalog.dir) and the track records in the
configured store, read beside a running bot and never written. --store takes a store URL or a
data dir; --catalog another catalog folder.`;

/** What the CLI says it read, on stderr: a person checks it is what the bot serves. */
async function describeSource(folder: ServedFolder, config: Config, entries: number): Promise<string> {
  if (folder.clone && config.catalog.git) {
    const head = await new GitMirror({ url: config.catalog.git.url, branch: config.catalog.git.branch, dir: folder.clone }).localHead().catch(() => undefined);
    return `the bot's git clone ${folder.dir}${head ? ` at ${head.slice(0, 12)}` : ''} (${entries} entries)`;
  }
  return `${folder.bundled ? 'the bundled catalog ' : ''}${folder.dir} (${entries} entries)`;
}

/** The payload, from a file or standard input. */
async function readPayload(values: { alert?: string }, fromStdin: boolean, io: CliIO): Promise<unknown> {
  const raw = fromStdin ? await io.stdin() : await readFile(resolve(io.cwd, values.alert!), 'utf8');
  return JSON.parse(raw);
}

/**
 * `reprise recall`: what recall answers for an Alertmanager payload, with the gate trace —
 * the same answer the running bot gives for it (same catalog, same track records, the
 * payload read with the same options as its webhook). Read-only: it records nothing.
 */
export const recallCommand: CliCommand = async (argv, io) => {
  const args = parseCli(
    argv,
    {
      alert: { type: 'string', description: 'Alertmanager webhook payload file, or - for stdin', valueName: 'FILE' },
      json: { type: 'boolean', description: 'print JSON instead of text' },
      config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
      catalog: { type: 'string', description: 'catalog directory (default: the catalog the bot serves: its git clone, else catalog.dir)', valueName: 'DIR' },
      store: { type: 'string', description: 'ledger store URL, or a data dir (default: the configured store)', valueName: 'URL|DIR' },
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
    body = await readPayload(values, fromStdin, io);
  } catch (err) {
    io.stderr(`reprise recall: cannot read the alert payload: ${(err as Error).message}\n`);
    return 2;
  }
  const loaded = loadCliConfig(values.config, io, { sections: RECALL_SECTIONS });
  if ('exit' in loaded) return loaded.exit;
  const withStore = storeArg(values.store, loaded.config, io, 'reprise recall');
  if ('exit' in withStore) return withStore.exit;
  const { config } = withStore;
  const now = new Date();
  let incidents;
  try {
    // As the webhook reads it: the same identity labels, field limit and link policy.
    incidents = parseAlertmanagerPayload(body, {
      receivedAt: now.toISOString(),
      fieldLimit: config.server.field_limit_chars,
      identity: { labels: config.identity.labels },
      links: { allowedHosts: config.links.allowed_hosts },
    }).incidents;
  } catch (err) {
    io.stderr(`reprise recall: ${isRepriseError(err) ? err.message : String(err)}\n`);
    return 2;
  }
  const folder = servedCatalogFolder(config, values.catalog === undefined ? undefined : resolve(io.cwd, values.catalog));
  if (typeof folder === 'string') {
    io.stderr(`reprise recall: ${folder}\n`);
    return 2;
  }
  const { snapshot, skipped } = await loadSnapshot(folder.dir);
  for (const p of skipped) io.stderr(`warning: skipped ${p.file}:${p.line} (${p.rule}): ${p.message}\n`);
  const ledger = openReadOnlyLedger(config, silentLogger);
  try {
    await ledger.refresh();
    if (!values.json) {
      io.stderr(`catalog: ${await describeSource(folder, config, snapshot.entries.length)}\n`);
      io.stderr(`ledger: ${ledger.source}${ledger.read.seq === 0 ? ' (nothing recorded yet: every track record is empty)' : ` (event #${ledger.read.seq})`}\n`);
      // With a model, the bot's match gate is the model's rerank: this shows the margin gate the bot starts from.
      if (config.model)
        io.stderr('note: a model is configured, so the bot lets it decide an instant recall (rerank, confirm, verify); this is the answer before it\n');
    }
    const opts = recallOptions(config);
    // Which labels made the identity (and so the trigger key) beside what recall decided.
    const out = incidents.map((i) => ({
      ...recallReport(
        i,
        recall(i, snapshot, (entry, kind) => ledger.read.trackRecord(entry, kind, now), opts, now),
      ),
      identity: { ...(i.identity ?? { basis: 'none', labels: [] }), ...(i.workload ? { workload: i.workload } : {}) },
    }));
    if (values.json) {
      io.stdout(`${JSON.stringify({ incidents: out }, null, 2)}\n`);
      return 0;
    }
    for (const o of out) {
      const from = o.identity.labels.length > 0 ? ` (from ${o.identity.labels.join(', ')})` : '';
      io.stdout(`${o.triggerKey}\n  identity: ${o.identity.basis}${from}\n`);
      io.stdout(`  answer: ${o.answer ? `${o.answer.kind} ${o.answer.entry} @ ${o.answer.confidence}` : 'none'}\n`);
      const related = o.answer?.related ?? [];
      if (related.length > 0) io.stdout(`  one of ${related.length + 1} related runbooks: also ${related.join(', ')}\n`);
      if (o.nearMiss) io.stdout(`  near miss: ${o.nearMiss.entry} (${o.nearMiss.gate}: ${o.nearMiss.reason})\n`);
      for (const t of o.trace) io.stdout(`  ${t.passed ? '✓' : '✗'} ${t.gate} ${t.entry ?? ''} — ${t.reason}\n`);
    }
    return 0;
  } finally {
    await ledger.close();
  }
};

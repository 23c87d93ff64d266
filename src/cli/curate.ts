import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { createStore } from '../adapters/keyv/keyv-store.js';
import { loadCatalog } from '../core/catalog/load-catalog.js';
import { CurateAudit, type StoredAudit } from '../core/curate/curate-audit.js';
import type { SweepReport } from '../core/curate/curate-types.js';
import { escapeLine } from '../core/render/escape-text.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import { draftPusher, forgeFromConfig, formatReport, runCuration } from './curate-context.js';
import type { CliCommand, CliIO } from './io.js';
import { BUNDLED_CATALOG } from './catalog-context.js';
import { cloneDir } from './served-catalog.js';
import { askOwner, withStoreLock } from './owner-or-direct.js';
import { openLedger } from './store-context.js';

const USAGE = `reprise curate [--apply] [--json] [--config FILE]
       reprise curate log [--json] [--verify] [--config FILE]

Grooming sweeps over the knowledge pull requests (SPEC §10): dedup open PRs, close stale ones,
suppress re-drafts of what a human rejected, promote resolved ones to ready-to-merge, open
knowledge-gap issues, warn on contested findings, propose retirements and revalidations.
Dry run by default: lists what it would do and writes nothing to the forge. --apply acts;
running it again does nothing. With a bot running it goes through the bot's control socket.
\`curate log\` prints the audit log of every planned and taken action.
Forge: the \`forge\` config block, or GITHUB_TOKEN, REPRISE_GITHUB_REPO (owner/name),
REPRISE_GITHUB_API_URL (GitHub Enterprise).`;

export const curateCommand: CliCommand = async (argv, io) => {
  if (argv[0] === 'log') return curateLog(argv.slice(1), io);
  const parsed = parseCli(argv, { apply: { type: 'boolean' }, json: { type: 'boolean' }, config: { type: 'string', short: 'c' } }, USAGE, io);
  if ('exit' in parsed) return parsed.exit;
  if (parsed.positionals.length > 0) {
    io.stderr(`reprise curate: unexpected argument ${JSON.stringify(parsed.positionals[0])}\nusage: ${USAGE}\n`);
    return 2;
  }
  const apply = parsed.values.apply === true;
  const loaded = loadCliConfig(parsed.values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const { config } = loaded;
  const logger = pino({ level: io.env['REPRISE_LOG_LEVEL'] ?? 'warn', base: { app: 'reprise' } }, pino.destination(2));
  const print = (r: SweepReport): number => {
    io.stdout(parsed.values.json ? `${JSON.stringify(r)}\n` : formatReport(r));
    return r.actions.some((a) => a.outcome === 'failed') ? 1 : 0;
  };

  // A running bot owns the store (and the audit log in it): ask it.
  const viaBot = await askOwner(
    config,
    io,
    { command: 'reprise curate', route: '/v1/curate', body: { apply }, timeoutMs: 600_000, nothing: 'Nothing was done.' },
    (status, reply, owner) => {
      const body = reply as { result?: SweepReport; error?: { message?: string } };
      if (status >= 400 || !body.result) {
        io.stderr(`reprise curate: the running bot (pid ${owner.pid}) refused: ${body.error?.message ?? `status ${status}`}\n`);
        return 1;
      }
      return print(body.result);
    },
  );
  if (viaBot !== undefined) return viaBot;

  const forge = forgeFromConfig(config, logger);
  if (!forge) {
    io.stderr(
      'reprise curate: no forge configured: set the `forge` config block, or GITHUB_TOKEN and REPRISE_GITHUB_REPO (owner/name), and REPRISE_GITHUB_API_URL for GitHub Enterprise.\n',
    );
    return 1;
  }
  return withStoreLock(config, io, 'reprise curate', 'Nothing was done.', async () => {
    const { store, ledger } = await openLedger(config);
    try {
      // The clone a bot left (catalog.git), else the catalog folder (no entry PRs then).
      const clone = config.catalog.git ? join(cloneDir(config), ...(config.catalog.git.path ? config.catalog.git.path.split('/') : [])) : undefined;
      const root = clone && existsSync(clone) ? clone : existsSync(config.catalog.dir) ? config.catalog.dir : BUNDLED_CATALOG;
      const { entries } = await loadCatalog(root).catch(() => ({ entries: [] }));
      const pusher = clone && existsSync(clone) ? draftPusher(config, logger) : undefined;
      const report = await runCuration({
        config,
        forge,
        ledger: ledger.read,
        entries,
        ...(pusher ? { pusher, catalogRoot: root } : {}),
        audit: new CurateAudit(store),
        apply,
        logger,
      });
      await ledger.close();
      return print(report);
    } catch (err) {
      io.stderr(`reprise curate: ${err instanceof Error ? err.message : String(err)}\n`);
      return 1;
    } finally {
      await store.close();
    }
  });
};

async function curateLog(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseCli(argv, { json: { type: 'boolean' }, verify: { type: 'boolean' }, config: { type: 'string', short: 'c' } }, USAGE, io);
  if ('exit' in parsed) return parsed.exit;
  const loaded = loadCliConfig(parsed.values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const store = createStore(loaded.config.store.url, loaded.config.store.data_dir);
  try {
    const audit = new CurateAudit(store);
    const records = await audit.read();
    for (const r of records) {
      if ('corrupt' in r) io.stdout(parsed.values.json ? `${JSON.stringify(r)}\n` : `#${r.seq} unreadable: ${r.corrupt}\n`);
      else io.stdout(parsed.values.json ? `${JSON.stringify(r)}\n` : `${line(r)}\n`);
    }
    if (records.length === 0 && !parsed.values.json) io.stdout('the curate audit log is empty: no sweep has run on this store\n');
    if (parsed.values.verify) {
      const broken = await audit.verify();
      if (broken) {
        io.stderr(`reprise curate log: the audit chain breaks at #${broken.seq}: ${broken.problem}\n`);
        return 1;
      }
      io.stderr(`audit chain verified: ${records.length} record(s)\n`);
    }
    return 0;
  } finally {
    await store.close();
  }
}

function line(r: StoredAudit): string {
  return escapeLine(
    `#${r.seq} ${r.at} ${r.mode} ${r.kind} ${r.target} ${r.outcome}: ${r.summary}${r.url ? ` — ${r.url}` : ''}${r.error ? ` — ${r.error}` : ''}`,
  );
}

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { configRedactor } from '../config/config-secrets.js';
import { createLogger } from '../runtime/create-logger.js';
import { loadCatalog } from '../core/catalog/load-catalog.js';
import { CurateAudit, type StoredAudit } from '../core/curate/curate-audit.js';
import type { SweepReport } from '../core/curate/curate-types.js';
import { escapeLine } from '../core/render/escape-text.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import { draftPusher, forgeFromConfig, formatReport, runCuration } from '../runtime/curate-context.js';
import type { CliCommand, CliIO } from '../runtime/cli-io.js';
import { catalogFolder } from '../runtime/open-catalog.js';
import { cloneDir } from '../runtime/served-catalog.js';
import { askOwner, withStoreLock } from '../runtime/owner-or-direct.js';
import { openLedger, openStore } from '../runtime/open-store.js';

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
  const parsed = parseCli(
    argv,
    {
      apply: { type: 'boolean', description: 'make the changes (default: a dry run that lists them)' },
      json: { type: 'boolean', description: 'print JSON instead of text' },
      config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  if (parsed.positionals.length > 0) {
    io.stderr(`reprise curate: unexpected argument ${JSON.stringify(parsed.positionals[0])}\nusage: ${USAGE}\n`);
    return 2;
  }
  const apply = parsed.values.apply === true;
  const loaded = loadCliConfig(parsed.values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const { config } = loaded;
  const logger = createLogger({ level: 'warn', env: io.env, redactor: configRedactor(config), ...(io.log ? { destination: io.log } : {}) });
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
      const root = clone && existsSync(clone) ? clone : catalogFolder(config).dir;
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
  const parsed = parseCli(
    argv,
    {
      json: { type: 'boolean', description: 'print JSON instead of text' },
      verify: { type: 'boolean', description: "check the log's hash chain" },
      config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const loaded = loadCliConfig(parsed.values.config, io);
  if ('exit' in loaded) return loaded.exit;
  // Read-write, as it always was: a store that does not exist yet reads as an empty audit log.
  const store = openStore(loaded.config, 'write');
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

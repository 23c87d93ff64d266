import { parseCli } from './args.js';
import { loadCliConfig, STORE_SECTIONS } from './cli-config.js';
import { controlRequest } from '../runtime/control-client.js';
import type { CliCommand } from '../runtime/cli-io.js';
import type { SyncReply } from '../runtime/served-catalog.js';
import { readServeOwner } from '../runtime/serve-owner.js';

const USAGE = `reprise catalog sync [--config FILE] [--json] [--timeout SECONDS]

Asks the running bot (through its control socket in the data dir) to fetch the catalog from
git now, and returns once the index is rebuilt, printing the new HEAD. Needs \`reprise serve\`
running on the same data dir with catalog.git.url (REPRISE_CATALOG_GIT_URL) set.`;

/** A clone of a large catalog over a slow link can take a while. */
const DEFAULT_TIMEOUT_S = 300;

/** `reprise catalog sync`: fetch now through the running bot; never touches the clone itself. */
export const catalogSync: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    {
      config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
      json: { type: 'boolean', description: 'print JSON instead of text' },
      timeout: { type: 'string', description: 'give up after this long (e.g. 10s)', valueName: 'DURATION' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  if (parsed.positionals.length > 0) {
    io.stderr(`reprise catalog sync: unexpected argument ${JSON.stringify(parsed.positionals[0])}\nusage: ${USAGE}\n`);
    return 2;
  }
  const timeoutS = parsed.values.timeout === undefined ? DEFAULT_TIMEOUT_S : Number(parsed.values.timeout);
  if (!Number.isFinite(timeoutS) || timeoutS <= 0) {
    io.stderr(`reprise catalog sync: --timeout must be a positive number of seconds, got ${JSON.stringify(parsed.values.timeout)}\n`);
    return 2;
  }
  // Only the data dir (where the bot's control socket is): the bot validated the rest when it started.
  const loaded = loadCliConfig(parsed.values.config, io, { sections: STORE_SECTIONS });
  if ('exit' in loaded) return loaded.exit;
  const dataDir = loaded.config.store.data_dir;
  const noBot = `Start the bot with \`reprise serve\` (same config / REPRISE_DATA_DIR) and run this again; nothing was fetched.`;

  const owner = readServeOwner(dataDir);
  if (!owner) {
    io.stderr(
      `reprise catalog sync: no running bot found for data dir ${dataDir} (no serve.json there). The bot owns the catalog clone and does the fetch. ${noBot}\n`,
    );
    return 1;
  }
  const reply = await controlRequest(owner.socket, 'POST', '/v1/catalog/sync', {}, timeoutS * 1000);
  if (!reply.ok) {
    if (reply.reason === 'absent')
      io.stderr(`reprise catalog sync: the bot that last ran on ${dataDir} (pid ${owner.pid}) is not running: nothing answers on ${owner.socket}. ${noBot}\n`);
    else if (reply.reason === 'denied')
      io.stderr(`reprise catalog sync: the running bot (pid ${owner.pid}) runs as ${owner.user || 'another user'}; run this command as that user.\n`);
    else io.stderr(`reprise catalog sync: no answer from the running bot (pid ${owner.pid}): ${reply.message}\n`);
    return 1;
  }
  const body = reply.body as { result?: SyncReply; error?: { code?: string; message?: string } };
  if (reply.status >= 400 || !body.result) {
    io.stderr(`reprise catalog sync: ${body.error?.message ?? `the bot answered ${reply.status}`}\n`);
    return 1;
  }
  const r = body.result;
  if (parsed.values.json) {
    io.stdout(`${JSON.stringify(r)}\n`);
    return 0;
  }
  if (r.mode === 'none') io.stdout(`catalog unchanged: HEAD ${r.head} (${r.remote} ${r.branch}); index kept, ${r.entries} entries\n`);
  else {
    io.stdout(
      `catalog synced: HEAD ${r.head}${r.oldHead ? ` (was ${r.oldHead})` : ' (first index)'}\n` +
        `  ${r.remote} ${r.branch}: ${r.entriesChanged} ${r.entriesChanged === 1 ? 'entry' : 'entries'} changed, ${r.entries} indexed (${r.mode === 'full' ? 'full rebuild' : 'updated in place'})\n`,
    );
  }
  for (const p of r.skipped) io.stdout(`  skipped ${p.file}:${p.line} [${p.rule}] ${p.message}\n`);
  return 0;
};

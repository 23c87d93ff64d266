import { recordedOrThrow, type NoteRequest } from '../core/bot/feedback-request.js';
import { DEFAULT_FIXES } from '../core/bot/fix-flow.js';
import { fixedIntent } from '../core/bot/intent.js';
import { isRepriseError } from '../core/errors.js';
import { offlineLoop } from '../runtime/offline-loop.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import type { CliCommand } from './io.js';
import { askOwner, osUser, withStoreLock } from '../runtime/owner-or-direct.js';
import { openLedger } from '../runtime/open-store.js';

const USAGE = `reprise fixed <triggerKey> <text…> [--user U] [--config FILE]

Records what fixed the trigger's newest incident, as user U (default: your OS user), exactly as
\`@reprise fixed: …\` in its thread: with a forge configured it is drafted as an Incident entry
pull request (a second fix for the same trigger comments on the open one). Through the running
bot's control socket; with no bot running, recorded directly (filed at its next start).`;

/** `reprise fixed`: through the bot that owns the store, or directly when none runs and the lock is free. */
export const fixed: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    {
      user: { type: 'string', description: 'whom to record it for (default: the OS user)', valueName: 'USER' },
      config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG)', valueName: 'FILE' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const [triggerKey, ...words] = parsed.positionals;
  const text = words.join(' ');
  if (!triggerKey || text.trim() === '') {
    io.stderr(`usage: ${USAGE}\n`);
    return 2;
  }
  if (Buffer.byteLength(text) > DEFAULT_FIXES.maxBytes) {
    io.stderr(
      `reprise fixed: fix not saved: it is ${Math.ceil(Buffer.byteLength(text) / 1024)} KiB, longer than ${DEFAULT_FIXES.maxBytes / 1024} KiB; say what fixed it in a few lines and link to a document\n`,
    );
    return 2;
  }
  const request: NoteRequest = { triggerKey, text, user: parsed.values.user ?? osUser(io) };
  const loaded = loadCliConfig(parsed.values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const { config } = loaded;
  const forge = config.forge !== undefined && config.catalog.git?.url !== undefined;
  const where = forge ? `; it will be drafted as an Incident entry on ${config.forge!.repo}` : '';

  const viaBot = await askOwner(
    config,
    io,
    { command: 'reprise fixed', route: '/v1/fixed', body: request, nothing: 'Nothing was recorded.' },
    (status, reply, owner) => {
      const body = reply as { result?: { seq?: number }; error?: { message?: string } };
      if (status >= 400) {
        io.stderr(`reprise fixed: the running bot (pid ${owner.pid}) refused: ${body.error?.message ?? JSON.stringify(reply)}\n`);
        return status === 404 || status === 400 || status === 413 ? 2 : 1;
      }
      io.stdout(`fix recorded via the running bot (pid ${owner.pid}) as event #${body.result?.seq ?? '?'} on ${triggerKey} for ${request.user}${where}\n`);
      return 0;
    },
  );
  if (viaBot !== undefined) return viaBot;

  return withStoreLock(config, io, 'reprise fixed', 'Nothing was recorded.', async () => {
    const { store, ledger } = await openLedger(config);
    try {
      // The same loop the bot runs: the thread is told when the bot next delivers.
      const [outcome] = await offlineLoop(config, ledger).bot.handle(fixedIntent(request));
      await ledger.close();
      let recorded;
      try {
        recorded = recordedOrThrow(outcome, 'fix');
      } catch (err) {
        io.stderr(`reprise fixed: ${(err as Error).message.replace(/^fix not recorded/, 'fix not saved')}\n`);
        return 2;
      }
      io.stdout(`fix recorded on ${triggerKey} for ${request.user} as event #${recorded.seq}${forge ? `${where} when the bot next runs` : ''}\n`);
      return 0;
    } catch (err) {
      if (isRepriseError(err)) {
        io.stderr(`reprise fixed: ${err.message}\n`);
        return 2;
      }
      throw err;
    } finally {
      await store.close();
    }
  });
};

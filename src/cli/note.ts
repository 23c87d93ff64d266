import { DEFAULT_NOTES } from '../core/bot/chat-actions.js';
import { recordedOrThrow, type NoteRequest } from '../core/bot/feedback-request.js';
import { noteIntent } from '../core/bot/intent.js';
import { isRepriseError } from '../core/errors.js';
import { offlineLoop } from '../runtime/offline-loop.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import type { CliCommand } from './io.js';
import { askOwner, osUser, withStoreLock } from '../runtime/owner-or-direct.js';
import { openLedger } from '../runtime/open-store.js';

const USAGE = `reprise note <triggerKey> <text…> [--user U] [--config FILE]

Writes an operator note on the trigger's newest incident thread, as user U (default: your OS
user), exactly as one written in the thread: with a forge configured it is filed as a
comment on the finding's open KB pull request, else as a new Concept entry PR. Through the
running bot's control socket; with no bot running, recorded directly (filed at its next start).`;

/** `reprise note`: through the bot that owns the store, or directly when none runs and the lock is free. */
export const note: CliCommand = async (argv, io) => {
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
  if (Buffer.byteLength(text) > DEFAULT_NOTES.maxBytes) {
    io.stderr(
      `reprise note: note not saved: it is ${Math.ceil(Buffer.byteLength(text) / 1024)} KiB, longer than ${DEFAULT_NOTES.maxBytes / 1024} KiB; shorten it or link to a document\n`,
    );
    return 2;
  }
  const request: NoteRequest = { triggerKey, text, user: parsed.values.user ?? osUser(io) };
  const loaded = loadCliConfig(parsed.values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const { config } = loaded;
  const forge = config.forge !== undefined && config.catalog.git?.url !== undefined;
  const where = forge ? `; it will be filed on ${config.forge!.repo}` : '';

  const viaBot = await askOwner(
    config,
    io,
    { command: 'reprise note', route: '/v1/note', body: request, nothing: 'Nothing was recorded.' },
    (status, reply, owner) => {
      const body = reply as { result?: { seq?: number }; error?: { message?: string } };
      if (status >= 400) {
        io.stderr(`reprise note: the running bot (pid ${owner.pid}) refused: ${body.error?.message ?? JSON.stringify(reply)}\n`);
        return status === 404 || status === 400 || status === 413 ? 2 : 1;
      }
      io.stdout(`note recorded via the running bot (pid ${owner.pid}) as event #${body.result?.seq ?? '?'} on ${triggerKey} for ${request.user}${where}\n`);
      return 0;
    },
  );
  if (viaBot !== undefined) return viaBot;

  return withStoreLock(config, io, 'reprise note', 'Nothing was recorded.', async () => {
    const { store, ledger } = await openLedger(config);
    try {
      // The same loop the bot runs: the thread is told when the bot next delivers.
      const [outcome] = await offlineLoop(config, ledger).bot.handle(noteIntent(request));
      await ledger.close();
      let recorded;
      try {
        recorded = recordedOrThrow(outcome, 'note');
      } catch (err) {
        io.stderr(`reprise note: ${(err as Error).message.replace(/^note not recorded/, 'note not saved')}\n`);
        return 2;
      }
      io.stdout(
        `note recorded on ${triggerKey} for ${request.user} as event #${recorded.seq}${forge ? `; it will be filed on ${config.forge!.repo} when the bot next runs` : ''}\n`,
      );
      return 0;
    } catch (err) {
      if (isRepriseError(err)) {
        io.stderr(`reprise note: ${err.message}\n`);
        return 2;
      }
      throw err;
    } finally {
      await store.close();
    }
  });
};

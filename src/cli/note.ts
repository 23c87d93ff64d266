import { applyCliNote } from '../core/bot/chat-actions.js';
import { DEFAULT_NOTES } from '../core/bot/reprise-bot.js';
import { isRepriseError, RepriseError } from '../core/errors.js';
import { silentLogger } from '../ports/logger.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import type { CliCommand } from './io.js';
import { askOwner, osUser, withStoreLock } from './owner-or-direct.js';
import { openLedger } from './store-context.js';

const USAGE = `reprise note <triggerKey> <text…> [--user U] [--config FILE]

Writes an operator note on the trigger's newest incident thread, as user U (default: your OS
user), exactly as one written in the thread: with a forge configured it is filed as a
comment on the finding's open KB pull request, else as a new Concept entry PR. Through the
running bot's control socket; with no bot running, recorded directly (filed at its next start).`;

export interface NoteRequest {
  triggerKey: string;
  text: string;
  user?: string;
}

/** A note request from the CLI or the control socket, checked. */
export function noteRequest(body: unknown): NoteRequest {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const key = b['triggerKey'];
  const text = b['text'];
  const user = b['user'];
  if (typeof key !== 'string' || key.trim() === '') throw new RepriseError('invalid_payload', 'triggerKey must be a non-empty string');
  if (typeof text !== 'string' || text.trim() === '') throw new RepriseError('invalid_payload', 'text must be a non-empty string');
  if (user !== undefined && (typeof user !== 'string' || user.trim() === '' || user.length > 200))
    throw new RepriseError('invalid_payload', 'user must be a non-empty string');
  return { triggerKey: key.trim(), text, ...(typeof user === 'string' ? { user } : {}) };
}

/** `reprise note`: through the bot that owns the store, or directly when none runs and the lock is free. */
export const note: CliCommand = async (argv, io) => {
  const parsed = parseCli(argv, { user: { type: 'string' }, config: { type: 'string', short: 'c' } }, USAGE, io);
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
      const out = { count: 0 };
      const { result, first } = await ledger.transaction(async (tx) =>
        applyCliNote(
          {
            ledger: ledger,
            now: new Date(),
            log: silentLogger,
            allow: () => true,
            notes: DEFAULT_NOTES,
            out,
            ...(forge ? { curate: { intents: 0 } } : {}),
          },
          tx,
          { triggerKey, actor: { id: request.user!, via: 'cli' }, text },
        ),
      );
      await ledger.close();
      if (result.status !== 'recorded') {
        io.stderr(`reprise note: note not saved: ${result.reason}\n`);
        return 2;
      }
      io.stdout(
        `note recorded on ${triggerKey} for ${request.user} as event #${first}${forge ? `; it will be filed on ${config.forge!.repo} when the bot next runs` : ''}\n`,
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

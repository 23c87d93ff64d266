import { feedbackEvent, feedbackIntent, recordedOrThrow } from '../core/bot/feedback-request.js';
import { offlineLoop } from '../runtime/offline-loop.js';
import { isRepriseError } from '../core/errors.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import type { CliCommand } from './io.js';
import { askOwner, osUser, withStoreLock } from '../runtime/owner-or-direct.js';
import { openLedger } from '../runtime/open-store.js';

const USAGE = `reprise feedback <triggerKey> up|down|clear [--user U] [--config FILE]
       reprise feedback <triggerKey> silence <duration> [--user U] [--config FILE]

Records 👍 / 👎 / a cleared vote / a 🔕 silence on a trigger the ledger has seen, as user U
(default: your OS user), marked as coming through the CLI. With a bot running on the same
data dir, it goes through the bot's control socket; otherwise it writes the store directly.`;

/**
 * `reprise feedback`: drive the loop without chat. The running bot owns the store: when its
 * control socket answers, the request goes there. Only when no bot answers *and* the store
 * lock can be taken does the CLI write directly — a socket it may not open (a bot running as
 * another user) or a lock held by someone else is an error, never a reason to write anyway.
 */
export const feedback: CliCommand = async (argv, io) => {
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
  const [triggerKey, action, duration, ...extra] = parsed.positionals;
  if (
    !triggerKey ||
    !action ||
    !['up', 'down', 'clear', 'silence'].includes(action) ||
    (action === 'silence') !== (duration !== undefined) ||
    extra.length > 0
  ) {
    io.stderr(`usage: ${USAGE}\n`);
    return 2;
  }
  const request = { triggerKey, action, user: parsed.values.user ?? osUser(io), via: 'cli', ...(duration ? { duration } : {}) };
  const loaded = loadCliConfig(parsed.values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const { config } = loaded;
  try {
    feedbackEvent(request, new Date()); // validate before touching anything
  } catch (err) {
    io.stderr(`reprise feedback: ${isRepriseError(err) ? err.message : String(err)}\n`);
    return 2;
  }

  const viaBot = await askOwner(
    config,
    io,
    { command: 'reprise feedback', route: '/v1/feedback', body: request, nothing: 'Nothing was recorded.' },
    (status, reply, owner) => {
      const body = reply as { result?: { seq?: number; event?: { until?: string; vote?: string } }; error?: { message?: string } };
      if (status >= 400) {
        io.stderr(`reprise feedback: the running bot (pid ${owner.pid}) refused: ${body.error?.message ?? JSON.stringify(reply)}\n`);
        return status === 404 || status === 400 ? 2 : 1;
      }
      io.stdout(
        `recorded via the running bot (pid ${owner.pid}) as event #${body.result?.seq ?? '?'}: ${describe(action, body.result?.event?.until)} on ${triggerKey} for ${request.user}\n`,
      );
      return 0;
    },
  );
  if (viaBot !== undefined) return viaBot;

  return withStoreLock(config, io, 'reprise feedback', 'Nothing was recorded.', async () => {
    const { store, ledger } = await openLedger(config);
    try {
      // The same loop the bot runs: the card is rewritten when the bot next delivers.
      const intent = feedbackIntent(ledger, request, new Date());
      const recorded = recordedOrThrow((await offlineLoop(config, ledger).bot.handle(intent))[0], 'feedback');
      await ledger.close();
      const until = recorded.event.type === 'silence' ? recorded.event.until : undefined;
      io.stdout(`recorded ${describe(action, until)} on ${triggerKey} for ${request.user} as event #${recorded.seq}\n`);
      return 0;
    } catch (err) {
      if (isRepriseError(err)) {
        io.stderr(`reprise feedback: ${err.message}\n`);
        return 2;
      }
      throw err;
    } finally {
      await store.close();
    }
  });
};

function describe(action: string, until: string | undefined): string {
  return action === 'silence' ? `silence until ${until ?? '?'}` : action;
}

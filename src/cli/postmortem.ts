import { ackRequest } from '../core/bot/feedback-request.js';
import { postmortemIntent } from '../core/bot/intent.js';
import type { PostmortemOutcome } from '../core/bot/postmortem-flow.js';
import type { BotOutcome } from '../core/bot/decide.js';
import { isRepriseError } from '../core/errors.js';
import { offlineLoop } from '../runtime/offline-loop.js';
import { askOwner, osUser, withStoreLock } from '../runtime/owner-or-direct.js';
import { openLedger } from '../runtime/open-store.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import type { CliCommand, CliIO } from './io.js';

const USAGE = `reprise postmortem <triggerKey> [--user U] [--config FILE]

Drafts a postmortem of the trigger's newest incident from what the ledger recorded of it
(timeline, impact, cause, what fixed it, what was tried), exactly as \`@reprise postmortem\` in
its thread or \`/reprise postmortem <trigger>\`: with a forge configured, a pull request adding
postmortems/<date>-<alert>.md to the catalog repo (the thread gets its link); without one, the
draft is printed here. Asked for as user U (default: your OS user). Through the running bot's
control socket; with no bot running, recorded directly (the PR is filed at its next start).`;

/** Control-characters out before printing: the draft quotes alert text and people's words. */
const printable = (s: string): string => s.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '?');

/** What the outcome says to the person at the terminal; 2 when nothing was drafted. */
function report(io: CliIO, o: BotOutcome | PostmortemOutcome | undefined, triggerKey: string, where: string): number {
  if (o?.status !== 'recorded') {
    io.stderr(`reprise postmortem: no postmortem drafted: ${o && 'reason' in o ? o.reason : 'nothing was recorded'}\n`);
    return 2;
  }
  const { draft } = o as { draft?: { path: string; content: string } };
  if (draft) {
    io.stderr(`reprise postmortem: no forge is configured, so here is the draft of ${triggerKey}; save it as ${draft.path}\n`);
    io.stdout(printable(draft.content));
    return 0;
  }
  io.stdout(`postmortem of ${triggerKey} asked for${where}: drafting it as a pull request under postmortems/; its link follows in the incident's thread\n`);
  return 0;
}

/** `reprise postmortem`: through the bot that owns the store, or directly when none runs and the lock is free. */
export const postmortem: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    {
      user: { type: 'string', description: 'who asks for it (default: the OS user)', valueName: 'USER' },
      config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG)', valueName: 'FILE' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const [triggerKey, ...rest] = parsed.positionals;
  if (!triggerKey || rest.length > 0) {
    io.stderr(`usage: ${USAGE}\n`);
    return 2;
  }
  let request;
  try {
    // Same shape as an ack's: a trigger key and who asks.
    request = ackRequest({ triggerKey, user: parsed.values.user ?? osUser(io) });
  } catch (err) {
    io.stderr(`reprise postmortem: ${(err as Error).message}\n`);
    return 2;
  }
  const loaded = loadCliConfig(parsed.values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const { config } = loaded;

  const viaBot = await askOwner(
    config,
    io,
    { command: 'reprise postmortem', route: '/v1/postmortem', body: request, nothing: 'Nothing was drafted.' },
    (status, reply, owner) => {
      const body = reply as { result?: { outcome?: PostmortemOutcome }; error?: { message?: string } };
      if (status >= 400) {
        io.stderr(`reprise postmortem: the running bot (pid ${owner.pid}) refused: ${body.error?.message ?? JSON.stringify(reply)}\n`);
        return status === 404 || status === 400 ? 2 : 1;
      }
      return report(io, body.result?.outcome, triggerKey, ` via the running bot (pid ${owner.pid})`);
    },
  );
  if (viaBot !== undefined) return viaBot;

  return withStoreLock(config, io, 'reprise postmortem', 'Nothing was drafted.', async () => {
    const { store, ledger } = await openLedger(config);
    try {
      const [outcome] = await offlineLoop(config, ledger).bot.handle(postmortemIntent(request));
      await ledger.close();
      return report(io, outcome, triggerKey, '');
    } catch (err) {
      if (isRepriseError(err)) {
        io.stderr(`reprise postmortem: ${err.message}\n`);
        return 2;
      }
      throw err;
    } finally {
      await store.close();
    }
  });
};

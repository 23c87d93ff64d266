import { ackRequest, recordedOrThrow } from '../core/bot/feedback-request.js';
import { ackIntent } from '../core/bot/intent.js';
import { isRepriseError } from '../core/errors.js';
import { offlineLoop } from '../runtime/offline-loop.js';
import { askOwner, osUser, withStoreLock } from '../runtime/owner-or-direct.js';
import { openLedger } from '../runtime/open-store.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import type { CliCommand } from './io.js';

const USAGE = `reprise ack <triggerKey> [--user U] [--config FILE]

Says that user U (default: your OS user) is on the trigger's newest incident, exactly as 👀
in its thread would: the card names who is on it; an ack never silences and never votes. On a
PagerDuty incident, with pagerduty.token and pagerduty.from set, PagerDuty is acknowledged too.
Through the running bot's control socket; with no bot running, recorded directly (the card is
edited, and PagerDuty asked, at its next start).`;

/** `reprise ack`: through the bot that owns the store, or directly when none runs and the lock is free. */
export const ack: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    {
      user: { type: 'string', description: 'who is on it (default: the OS user)', valueName: 'USER' },
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
    request = ackRequest({ triggerKey, user: parsed.values.user ?? osUser(io) });
  } catch (err) {
    io.stderr(`reprise ack: ${(err as Error).message}\n`);
    return 2;
  }
  const loaded = loadCliConfig(parsed.values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const { config } = loaded;

  const viaBot = await askOwner(
    config,
    io,
    { command: 'reprise ack', route: '/v1/ack', body: request, nothing: 'Nothing was recorded.' },
    (status, reply, owner) => {
      const body = reply as { result?: { seq?: number }; error?: { message?: string } };
      if (status >= 400) {
        io.stderr(`reprise ack: the running bot (pid ${owner.pid}) refused: ${body.error?.message ?? JSON.stringify(reply)}\n`);
        return status === 404 || status === 400 ? 2 : 1;
      }
      io.stdout(`ack recorded via the running bot (pid ${owner.pid}) as event #${body.result?.seq ?? '?'}: ${request.user} is on ${triggerKey}\n`);
      return 0;
    },
  );
  if (viaBot !== undefined) return viaBot;

  return withStoreLock(config, io, 'reprise ack', 'Nothing was recorded.', async () => {
    const { store, ledger } = await openLedger(config);
    try {
      const [outcome] = await offlineLoop(config, ledger).bot.handle(ackIntent(request));
      await ledger.close();
      let recorded;
      try {
        recorded = recordedOrThrow(outcome, 'ack');
      } catch (err) {
        io.stderr(`reprise ack: ${(err as Error).message}\n`);
        return 2;
      }
      io.stdout(`ack recorded as event #${recorded.seq}: ${request.user} is on ${triggerKey}; the card is edited when the bot next runs\n`);
      return 0;
    } catch (err) {
      if (isRepriseError(err)) {
        io.stderr(`reprise ack: ${err.message}\n`);
        return 2;
      }
      throw err;
    } finally {
      await store.close();
    }
  });
};

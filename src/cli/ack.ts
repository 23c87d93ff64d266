import { ackRequest, type AckRequest } from '../core/bot/feedback-request.js';
import { ackIntent } from '../core/bot/intent.js';
import { cliWrite } from './cli-write.js';

const USAGE = `reprise ack <trigger…> [--user U] [--config FILE]

Says that user U (default: your OS user) is on the trigger's newest incident, exactly as 👀
in its thread would: the card names who is on it; an ack never silences and never votes. On a
PagerDuty incident, with pagerduty.token and pagerduty.from set, PagerDuty is acknowledged too.
The trigger is its key, a unique part of it or a few of its words (\`reprise ack logs-02\`).
Through the running bot's control socket; with no bot running, recorded directly (the card is
edited, and PagerDuty asked, at its next start).`;

/** `reprise ack`: through the bot that owns the store, or directly when none runs and the lock is free. */
export const ack = cliWrite<AckRequest>({
  name: 'ack',
  usage: USAGE,
  userHelp: 'who is on it (default: the OS user)',
  route: '/v1/ack',
  what: 'ack',
  request: (words, user) => (words.length === 0 ? undefined : ackRequest({ triggerKey: words.join(' '), user })),
  intent: (_ledger, request) => ackIntent(request),
  said: (request, recorded, _config, how) =>
    how === 'offline'
      ? `ack recorded as event #${recorded.seq}: ${request.user} is on ${request.triggerKey}; the card is edited when the bot next runs`
      : `ack recorded via the running bot (pid ${how.pid}) as event #${recorded.seq ?? '?'}: ${request.user} is on ${request.triggerKey}`,
});

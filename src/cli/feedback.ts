import { feedbackEvent, feedbackIntent } from '../core/bot/feedback-request.js';
import { cliWrite } from './cli-write.js';

const USAGE = `reprise feedback <trigger…> up|down|clear [--user U] [--config FILE]
       reprise feedback <trigger…> silence <duration> [--user U] [--config FILE]

Records 👍 / 👎 / a cleared vote / a 🔕 silence on a trigger the ledger has seen, as user U
(default: your OS user), marked as coming through the CLI. The trigger is its key, a unique
part of it or a few of its words (\`reprise feedback checkout-api crashloop down\`). With a bot running on the same
data dir, it goes through the bot's control socket; otherwise it writes the store directly.`;

interface FeedbackRequest {
  triggerKey: string;
  action: string;
  user: string;
  via: 'cli';
  duration?: string;
}

/**
 * `reprise feedback`: drive the loop without chat. The running bot owns the store: when its
 * control socket answers, the request goes there. Only when no bot answers *and* the store
 * lock can be taken does the CLI write directly — a socket it may not open (a bot running as
 * another user) or a lock held by someone else is an error, never a reason to write anyway.
 */
export const feedback = cliWrite<FeedbackRequest>({
  name: 'feedback',
  usage: USAGE,
  userHelp: 'whom to record it for (default: the OS user)',
  route: '/v1/feedback',
  what: 'feedback',
  request(words, user) {
    // The action is last (`silence <duration>` the last two words); the words before it name the trigger.
    const silence = words.length >= 3 && words[words.length - 2] === 'silence';
    const action = silence ? 'silence' : words[words.length - 1];
    const duration = silence ? words[words.length - 1] : undefined;
    const triggerKey = words.slice(0, silence ? -2 : -1).join(' ');
    if (triggerKey.trim() === '' || !action || !['up', 'down', 'clear', 'silence'].includes(action) || (action === 'silence') !== silence) return undefined;
    const request: FeedbackRequest = { triggerKey, action, user, via: 'cli', ...(duration ? { duration } : {}) };
    feedbackEvent(request, new Date()); // validate before touching anything (throws with the reason)
    return request;
  },
  intent: (ledger, request) => feedbackIntent(ledger, request, new Date()),
  said(request, recorded, _config, how) {
    const until = recorded.event?.until;
    // A time people read (`2026-11-29 10:06 UTC`), not an ISO stamp (the ledger event keeps the stamp).
    const shown = until && Number.isFinite(Date.parse(until)) ? `${new Date(until).toISOString().slice(0, 16).replace('T', ' ')} UTC` : (until ?? '?');
    const what = request.action === 'silence' ? `silence until ${shown}` : request.action;
    return how === 'offline'
      ? `recorded ${what} on ${request.triggerKey} for ${request.user} as event #${recorded.seq}`
      : `recorded via the running bot (pid ${how.pid}) as event #${recorded.seq ?? '?'}: ${what} on ${request.triggerKey} for ${request.user}`;
  },
});

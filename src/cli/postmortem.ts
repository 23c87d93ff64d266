import { ackRequest, type AckRequest } from '../core/bot/feedback-request.js';
import { postmortemIntent } from '../core/bot/intent.js';
import { cliWrite } from './cli-write.js';

const USAGE = `reprise postmortem <trigger…> [--user U] [--config FILE]

Drafts a postmortem of the trigger's newest incident from what the ledger recorded of it
(timeline, impact, cause, what fixed it, what was tried), exactly as \`@reprise postmortem\` in
its thread or \`/reprise postmortem <trigger>\`: with a forge configured, a pull request adding
postmortems/<date>-<alert>.md to the catalog repo (the thread gets its link); without one, the
draft is printed here. Asked for as user U (default: your OS user). Through the running bot's
control socket; with no bot running, recorded directly (the PR is filed at its next start).`;

/** Control characters out before printing: the draft quotes alert text and people's words. */
const printable = (s: string): string => s.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '?');

/** `reprise postmortem`: through the bot that owns the store, or directly when none runs and the lock is free. */
export const postmortem = cliWrite<AckRequest>({
  name: 'postmortem',
  usage: USAGE,
  userHelp: 'who asks for it (default: the OS user)',
  route: '/v1/postmortem',
  what: 'postmortem',
  // Same shape as an ack's: a trigger key and who asks.
  request: (words, user) => (words.length === 0 ? undefined : ackRequest({ triggerKey: words.join(' '), user })),
  intent: (_ledger, request) => postmortemIntent(request),
  aside: (request, recorded) =>
    recorded.draft ? `no forge is configured, so here is the draft of ${request.triggerKey}; save it as ${recorded.draft.path}` : undefined,
  said: (request, recorded, _config, how) => {
    if (recorded.draft) return printable(recorded.draft.content).trimEnd();
    const where = how === 'offline' ? '; the pull request is filed when the bot next runs' : ` via the running bot (pid ${how.pid})`;
    return `postmortem of ${request.triggerKey} asked for as event #${recorded.seq ?? '?'}${where}: drafting it as a pull request under postmortems/; its link follows in the incident's thread`;
  },
});

import { DEFAULT_NOTES } from '../core/bot/chat-actions.js';
import type { NoteRequest } from '../core/bot/feedback-request.js';
import { noteIntent } from '../core/bot/intent.js';
import { cliWrite, tooLong } from './cli-write.js';

const USAGE = `reprise note <trigger> <text…> [--user U] [--config FILE]

Writes an operator note on the trigger's newest incident thread, as user U (default: your OS
user), exactly as one written in the thread: with a forge configured it is filed as a
comment on the finding's open KB pull request, else as a new Concept entry PR. Through the
running bot's control socket; with no bot running, recorded directly (filed at its next start).
The trigger is its key or a unique part of it (\`logs-02\`); quote a name of several words.`;

/** `reprise note`: through the bot that owns the store, or directly when none runs and the lock is free. */
export const note = cliWrite<NoteRequest>({
  name: 'note',
  usage: USAGE,
  userHelp: 'whom to record it for (default: the OS user)',
  route: '/v1/note',
  what: 'note',
  request([triggerKey, ...words], user) {
    const text = words.join(' ');
    if (!triggerKey || text.trim() === '') return undefined;
    return tooLong('note', text, DEFAULT_NOTES.maxBytes, 'shorten it or link to a document') ?? { triggerKey, text, user };
  },
  intent: (_ledger, request) => noteIntent(request),
  said(request, recorded, config, how) {
    const forge = config.forge !== undefined && config.catalog.git?.url !== undefined;
    const where = forge ? `; it will be filed on ${config.forge!.repo}` : '';
    return how === 'offline'
      ? `note recorded on ${request.triggerKey} for ${request.user} as event #${recorded.seq}${forge ? `${where} when the bot next runs` : ''}`
      : `note recorded via the running bot (pid ${how.pid}) as event #${recorded.seq ?? '?'} on ${request.triggerKey} for ${request.user}${where}`;
  },
});

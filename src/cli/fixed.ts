import type { NoteRequest } from '../core/bot/feedback-request.js';
import { DEFAULT_FIXES } from '../core/bot/fix-flow.js';
import { fixedIntent } from '../core/bot/intent.js';
import { cliWrite, tooLong } from './cli-write.js';

const USAGE = `reprise fixed <trigger> <text…> [--user U] [--config FILE]

Records what fixed the trigger's newest incident, as user U (default: your OS user), exactly as
\`@reprise fixed: …\` in its thread: with a forge configured it is drafted as an Incident entry
pull request (a second fix for the same trigger comments on the open one). Through the running
bot's control socket; with no bot running, recorded directly (filed at its next start).
The trigger is its key or a unique part of it (\`logs-02\`); quote a name of several words.`;

/** `reprise fixed`: through the bot that owns the store, or directly when none runs and the lock is free. */
export const fixed = cliWrite<NoteRequest>({
  name: 'fixed',
  usage: USAGE,
  userHelp: 'whom to record it for (default: the OS user)',
  route: '/v1/fixed',
  what: 'fix',
  request([triggerKey, ...words], user) {
    const text = words.join(' ');
    if (!triggerKey || text.trim() === '') return undefined;
    return tooLong('fix', text, DEFAULT_FIXES.maxBytes, 'say what fixed it in a few lines and link to a document') ?? { triggerKey, text, user };
  },
  intent: (_ledger, request) => fixedIntent(request),
  said(request, recorded, config, how) {
    const forge = config.forge !== undefined && config.catalog.git?.url !== undefined;
    const where = forge ? `; it will be drafted as an Incident entry on ${config.forge!.repo}` : '';
    return how === 'offline'
      ? `fix recorded on ${request.triggerKey} for ${request.user} as event #${recorded.seq}${forge ? `${where} when the bot next runs` : ''}`
      : `fix recorded via the running bot (pid ${how.pid}) as event #${recorded.seq ?? '?'} on ${request.triggerKey} for ${request.user}${where}`;
  },
});

/**
 * The private answers to what a person typed or clicked: `/reprise …` / `!reprise …` commands
 * (recall, investigate, silence, status, help) and the acknowledgement of a button click.
 */
import type { EphemeralView } from '../chat/thread-view.js';
import type { SilenceEvent } from '../ledger-events.js';
import type { RecallResult } from '../recall/recall.js';
import type { Incident } from '../types.js';
import type { BotLedger } from './bot-context.js';
import type { Actor, BotEvent } from './bot-event.js';
import type { ChatOutcome } from './chat-actions.js';
import { adHocIncident, helpAnswer, parseCommand, plainAnswer, recallAnswer, silenceTarget, statusAnswer } from './commands.js';

export interface CommandDeps {
  now: Date;
  ledger: BotLedger;
  /** What recall answers for an incident (read-only). */
  preview(incident: Incident): RecallResult;
  /** An on-demand investigation; absent without a model. */
  investigate?: (text: string, actor: Actor) => Promise<EphemeralView>;
  /** Records a 🔕 through the bot (its own transaction); the outcome it gives. */
  silence(req: Extract<BotEvent, { type: 'silence' }>): Promise<unknown>;
}

export async function answerCommand(e: Extract<BotEvent, { type: 'command' }>, d: CommandDeps): Promise<EphemeralView> {
  const cmd = parseCommand(e.text);
  switch (cmd.name) {
    case 'recall':
      if (cmd.text.trim() === '') return plainAnswer('Recall', 'Say what to recall: `recall KubePodCrashLooping` or `recall disk filling up on node`.');
      return recallAnswer(cmd.text, d.preview(adHocIncident(cmd.text, d.now)));
    case 'investigate':
      return d.investigate
        ? d.investigate(cmd.text, e.actor)
        : plainAnswer(
            'Investigate',
            'No model is configured, so Reprise cannot investigate yet: set the `model:` block (or REPRISE_MODEL_BASE_URL and REPRISE_MODEL). Recall and runbooks work without one.',
          );
    case 'silence': {
      const target = silenceTarget(cmd, e.thread);
      if (!target) return plainAnswer('Silence', 'Use it inside an incident thread (`silence 4h`), or name the trigger: `silence <trigger key> 4h`.');
      const o = (await d.silence({ type: 'silence', actor: e.actor, duration: cmd.duration, target, eventId: e.eventId, respond: e.respond })) as
        ChatOutcome | undefined;
      return o && o.status === 'recorded' && 'event' in o && o.event.type === 'silence'
        ? plainAnswer('Silenced', `🔕 ${o.triggerKey} until ${o.event.until}`)
        : plainAnswer('Not silenced', o && 'reason' in o ? o.reason : 'nothing recorded');
    }
    case 'status':
      return statusAnswer(d.ledger, d.now);
    case 'help':
      return helpAnswer();
    case 'unknown':
      return { ...helpAnswer(), title: `Unknown command “${cmd.word}” — Reprise commands` };
  }
}

/** The private acknowledgement of a button click (vote or silence). */
export function clickAnswer(action: string, o: ChatOutcome): EphemeralView {
  if (o.status === 'duplicate') return plainAnswer('Already recorded', 'That click was already counted.');
  if (o.status !== 'recorded') return plainAnswer('Not recorded', o.reason);
  if (action === 'silence') return plainAnswer('Silenced', `🔕 until ${(o.event as SilenceEvent).until}`);
  return plainAnswer('Thanks', action === 'vote_up' ? '👍 recorded as accurate' : '👎 recorded as off-base; the entry behind this answer loses trust');
}

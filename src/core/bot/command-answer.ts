/**
 * `/reprise …` (Slack) and `!reprise …` (Matrix): recall, investigate, silence, ack, status,
 * postmortem, help.
 * Each is answered once, privately, through the outbox; `investigate` is a background job whose
 * answer follows when the model is done — the surface that handed the command in never waits.
 */
import { postmortemSyntax } from '../chat/surface-syntax.js';
import type { ChatIntent } from '../chat/chat-types.js';
import type { EphemeralView } from '../chat/thread-view.js';
import { resolveTriggerName, triggerNameSaid } from '../trigger-name.js';
import { answer, shortTime, type Ctx } from './bot-context.js';
import type { ChatOutcome } from './bot-context.js';
import { decideSilence, isUserError } from './chat-actions.js';
import { decideAck } from './ack-flow.js';
import { decidePostmortem } from './postmortem-flow.js';
import { incidentTimeline, timelineAnswer } from './incident-timeline.js';
import { namedInText, rankTextQuery } from '../search/text-query.js';
import { adHocIncident, helpAnswer, parseCommand, plainAnswer, recallAnswer, silenceTarget, statusAnswer } from './commands.js';
import { previewRecall } from './firing-flow.js';
import { commandRefusal } from './command-gate.js';

type Command = Extract<ChatIntent, { type: 'command' }>;

export type CommandOutcome = { status: 'answered'; command: string } | ChatOutcome;

/**
 * The trigger a command names (its key, a unique part of it, a few of its words), or the answer
 * saying which triggers it might mean: one resolver for every surface (core/trigger-name.ts).
 */
function namedTrigger(c: Ctx, name: string): { triggerKey: string } | { answer: EphemeralView } {
  const r = resolveTriggerName(name, c.read.triggerKeys());
  if (r.ok) return { triggerKey: r.triggerKey };
  const said = triggerNameSaid(r, '`status` lists open incidents');
  return { answer: { kind: 'ephemeral', title: 'Which trigger?', body: [said.map((p) => (typeof p === 'string' ? p : { code: p.key }))] } };
}

export function decideCommand(c: Ctx, e: Command): CommandOutcome {
  if (c.read.seenChatEvent(e.eventId)) return { status: 'duplicate', reason: `event ${e.eventId} was already recorded` };
  const reply = (view: Parameters<typeof answer>[3]): CommandOutcome => {
    // The answer carries the command's event id: a re-read of it (a Matrix batch read again) answers nothing twice.
    answer(c, e.actor.via, e.replyTo, view, e.eventId);
    return { status: 'answered', command: cmd.name };
  };
  // Where and by whom before anything is read: a refused command learns nothing (not even which triggers exist).
  const refused = commandRefusal(c, e);
  if (refused) {
    answer(c, e.actor.via, e.replyTo, { kind: 'ephemeral', title: refused.title, body: [refused.line] }, e.eventId);
    c.log.info({ user: e.actor.id, via: e.actor.via, channel: e.channel, command: e.name, why: refused.kind }, 'command refused');
    return { status: 'refused', reason: refused.reason };
  }
  const parsed = parseCommand(e.name, e.args);
  let cmd = parsed;
  if ('triggerKey' in parsed && parsed.triggerKey !== undefined) {
    const named = namedTrigger(c, parsed.triggerKey);
    if ('answer' in named) return reply(named.answer);
    cmd = { ...parsed, triggerKey: named.triggerKey };
  }
  switch (cmd.name) {
    case 'recall':
      if (cmd.text.trim() === '') return reply(plainAnswer('Recall', 'Say what to recall: `recall KubePodCrashLooping` or `recall disk filling up on node`.'));
      {
        const snapshot = c.d.catalog();
        const found = c.d.textIndex ? rankTextQuery(cmd.text, snapshot.entries, c.d.textIndex(snapshot), 5) : undefined;
        return reply(recallAnswer(cmd.text, previewRecall(c, adHocIncident(cmd.text, c.now, namedInText(cmd.text, snapshot.entries))), found));
      }
    case 'investigate':
      if (!c.d.investigate)
        return reply(
          plainAnswer(
            'Investigate',
            'No model is configured, so Reprise cannot investigate yet: set the `model:` block (or REPRISE_MODEL_BASE_URL and REPRISE_MODEL). Recall and runbooks work without one.',
          ),
        );
      if (cmd.text.trim() === '') return reply(plainAnswer('Investigate', 'Say what to investigate: `investigate checkout-api 502s since 14:00`.'));
      c.effects.push({ type: 'investigate_text', text: cmd.text, actor: e.actor, replyTo: e.replyTo });
      return reply(
        plainAnswer('Investigating', '🔎 an investigation has started with the model and read-only tools; its finding follows here when it is done.'),
      );
    case 'silence': {
      const target = silenceTarget(cmd, e.thread);
      if (!target) return reply(plainAnswer('Silence', 'Use it inside an incident thread (`silence 4h`), or name the trigger: `silence <trigger key> 4h`.'));
      // Answered here, once: the silence itself says nothing privately.
      const o = decideSilence(c, {
        type: 'silence',
        eventId: e.eventId,
        actor: e.actor,
        duration: cmd.duration,
        ...(cmd.alertmanager ? { alertmanager: true } : {}),
        target,
      });
      if (o.status === 'recorded' && o.event.type === 'silence')
        return reply(plainAnswer('Silenced', `🔕 ${o.triggerKey} until ${shortTime(o.event.until, c.now)}`));
      if (o.status === 'duplicate') return o;
      answer(c, e.actor.via, e.replyTo, plainAnswer('Not silenced', o.status === 'recorded' ? 'nothing recorded' : o.reason), e.eventId);
      return o;
    }
    case 'status':
      if (cmd.triggerKey) return reply(timelineAnswer(incidentTimeline(c.read, cmd.triggerKey), c.now));
      return reply(statusAnswer(c.read, c.now));
    case 'ack': {
      const target = cmd.triggerKey ? { triggerKey: cmd.triggerKey } : e.thread ? { message: e.thread } : undefined;
      if (!target) return reply(plainAnswer('Ack', 'Use it inside an incident thread (`ack`), or name the trigger: `ack <trigger key>`.'));
      let o: ChatOutcome;
      try {
        o = decideAck(c, { type: 'ack', eventId: e.eventId, actor: e.actor, target });
      } catch (err) {
        if (!isUserError(err)) throw err;
        o = { status: 'refused', reason: err.message };
      }
      if (o.status === 'duplicate') return o;
      // Typed in the incident's own thread (`!reprise ack`), the card's edit and the thread's notice answer it: no third message.
      if (o.status === 'recorded' && !cmd.triggerKey && e.replyTo.kind === 'thread') return o;
      answer(
        c,
        e.actor.via,
        e.replyTo,
        o.status === 'recorded' ? plainAnswer('On it', `👀 recorded: you are on ${o.triggerKey}`) : plainAnswer('Not recorded', o.reason),
        e.eventId,
      );
      return o;
    }
    case 'postmortem': {
      const target = cmd.triggerKey ? { triggerKey: cmd.triggerKey } : e.thread ? { message: e.thread } : undefined;
      if (!target)
        return reply(
          plainAnswer(
            'Postmortem',
            `Name the trigger: \`postmortem <trigger key>\` (\`status\` lists open incidents), or ask in its thread: \`${postmortemSyntax(e.actor.via)}\`.`,
          ),
        );
      try {
        // Answered by the flow: the PR is on its way (its link follows in the thread), or the draft itself.
        const o = decidePostmortem(c, { type: 'postmortem', eventId: e.eventId, actor: e.actor, target, replyTo: e.replyTo });
        if (o.status !== 'recorded' && o.status !== 'duplicate') answer(c, e.actor.via, e.replyTo, plainAnswer('No postmortem', o.reason), e.eventId);
        return o;
      } catch (err) {
        if (!isUserError(err)) throw err;
        return reply(plainAnswer('No postmortem', err.message));
      }
    }
    case 'oncall':
      if (!c.d.whoIsOnCall)
        return reply(
          plainAnswer('📟 On call', 'No on-call source is configured: set `oncall.rotation`, `oncall.pagerduty` or `oncall.grafana` (docs/oncall.md).'),
        );
      // Asked in the background (a provider may be slow); its answer is this command's one answer.
      c.effects.push({ type: 'oncall_text', ...(cmd.route ? { route: cmd.route } : {}), actor: e.actor, replyTo: e.replyTo, eventId: e.eventId });
      return { status: 'answered', command: cmd.name };
    case 'help':
      return reply(helpAnswer(e.actor.via));
    case 'unknown':
      return reply({ ...helpAnswer(e.actor.via), title: `Unknown command “${cmd.word}” — Reprise commands` });
  }
}

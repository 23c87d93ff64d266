/**
 * A question in an incident thread (issue 21 item 3): a mention that is no verb (`note:`,
 * `fixed:`, `silence`, `ack`). Answered in the thread, through the outbox, from what the ledger
 * and the catalog hold — what fixed it last time, how often and when it happened, the runbook,
 * what was tried and failed — at most `perThreadPerHour` per thread. The question's words are
 * never echoed and never change what is looked up: the answer is about the thread's trigger.
 */
import type { ChatIntent } from '../chat/chat-types.js';
import { entrySection, plainText } from '../chat/entry-text.js';
import { spanResolvedNote, spanStart } from '../chat/incident-span.js';
import type { RichText } from '../chat/thread-view.js';
import { tellRefusal } from './refusal.js';
import { utcDay } from '../investigate/budget.js';
import { questionAnswerText, questionMessages } from '../investigate/question-prompt.js';
import type { Entry } from '../types.js';
import { notify, ledgerUser, recordedRun, shortTime, type Ctx, type ThreadInfo } from './bot-context.js';
import { fixSyntax } from '../chat/surface-syntax.js';
import { personLabel } from '../people.js';
import type { ChatOutcome, QuestionOptions, QuestionReply } from './bot-context.js';

/** The model's answer to a thread question came back (or the call failed). */
export type QuestionAnswered = { type: 'question_answered'; openId: string; triggerKey: string; transport: string } & (
  { reply: QuestionReply } | { error: string }
);

export const DEFAULT_QUESTIONS: QuestionOptions = { perThreadPerHour: 5 };

const HOUR = 3_600_000;
/** Longest quote of a fix, a note or an entry section in an answer. */
const QUOTE = 500;

type Question = Extract<ChatIntent, { type: 'question' }>;

/** An entry section's paragraphs on one line, as their rich text (code stays code), bounded like a quote. */
function quotedRuns(paragraphs: readonly RichText[]): RichText {
  const runs: RichText = [];
  let left = QUOTE;
  for (const [i, p] of paragraphs.entries()) {
    if (i > 0) runs.push(' ');
    for (const r of p) {
      const t = typeof r === 'string' ? r : plainText([r]);
      if (t.length > left) {
        runs.push(`${plainText([r]).slice(0, Math.max(0, left - 1))}…`);
        return runs;
      }
      runs.push(r);
      left -= t.length;
    }
  }
  return runs;
}

const quote = (text: string): string => {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > QUOTE ? `${one.slice(0, QUOTE - 1)}…` : one;
};

const TRIED = /\b(did(?:n'?t| not) (?:work|help|fix)|no effect|not the (?:cause|fix)|made (?:it|things) worse|tried\b)/i;

/** The runbook of the thread: the one it showed, else a resource-less entry listing the alert. */
function runbookOf(c: Ctx, thread: ThreadInfo, alertname: string): Entry | undefined {
  const entries = c.d.catalog().entries;
  if (thread.entry && thread.answerKind === 'runbook') return entries.find((e) => e.id === thread.entry);
  const name = alertname.toLowerCase();
  return entries.find((e) => !e.resource && e.status !== 'retired' && e.status !== 'draft' && e.alerts.includes(name));
}

/** The deterministic answer: what the ledger and the catalog know about the thread's trigger. */
export function knownAnswer(c: Ctx, thread: ThreadInfo, transport: string): RichText[] {
  const key = thread.triggerKey;
  const alertname = thread.alert?.alertname ?? key.split('|')[0] ?? 'alert';
  const lines: RichText[] = [];
  const entries = c.d.catalog().entries;
  const recalled = thread.entry ? entries.find((e) => e.id === thread.entry) : undefined;
  // 1. What fixed it last time: the newest human fix, else the resolution of the entry recalled.
  const fix = c.read.humanFixes(key).at(-1);
  if (fix) lines.push(['🛠 What fixed it last time (', recordedRun(fix), `, ${shortTime(fix.at, c.now)}): “${quote(fix.text)}”`]);
  else if (recalled?.sections['what has fixed it'] || recalled?.sections['resolution'])
    lines.push([
      '🛠 Resolution from ',
      { code: recalled.id },
      ': ',
      ...quotedRuns(entrySection(recalled.sections['what has fixed it']) ?? entrySection(recalled.sections['resolution']) ?? []),
    ]);
  else lines.push(['🛠 No fix is recorded for this alert yet; once you know, reply ', { code: fixSyntax(transport) }]);
  // 2. How often and when.
  const occ = c.read.occurrences(key);
  const episodes = c.read.recentEpisodes(key).slice(0, 3);
  const when = episodes.map((e) => {
    const start = spanStart(e) ?? e.openedAt;
    return `${shortTime(start, c.now)}${e.resolvedAt ? ` (${spanResolvedNote(e)})` : ''}`;
  });
  lines.push([
    `🔁 Fired ${occ.count} time${occ.count === 1 ? '' : 's'}${occ.firstSeen ? ` since ${shortTime(occ.firstSeen, c.now)}` : ''}`,
    ...(when.length > 0 ? [`; recent: ${when.join(', ')}`] : []),
  ]);
  // 3. The runbook.
  const runbook = runbookOf(c, thread, alertname);
  if (runbook) {
    const link = c.d.linkFor?.(runbook.id);
    lines.push(['📚 Runbook: ', link ? { link: { url: link, label: runbook.title } } : { code: runbook.id }]);
  }
  // 4. What was tried and failed: the entry's section, notes that say so, a 👎 on the answer.
  const tried: string[] = [];
  const triedSection = entrySection(recalled?.sections['tried and failed']);
  if (triedSection) tried.push(quote(triedSection.map(plainText).join(' ')));
  for (const n of c.read.humanNotes(key)) if (TRIED.test(n.text)) tried.push(quote(n.text));
  if (occ.down > 0 && thread.entry) tried.push(`the answer from ${thread.entry} was judged off-base (👎 ${occ.down})`);
  if (tried.length > 0) lines.push([`❌ Tried and failed: ${tried.slice(-3).join(' · ')}`]);
  return lines;
}

export function decideQuestion(c: Ctx, e: Question): ChatOutcome {
  if (c.read.seenChatEvent(e.eventId)) return { status: 'duplicate', reason: `event ${e.eventId} was already recorded` };
  if (!(c.d.allow ?? (() => true))(e.actor)) return { status: 'refused', reason: `${e.actor.via} user ${e.actor.id} is not on the allowlist` };
  const thread = e.target.message ? c.read.threadByMessage(e.target.message) : undefined;
  if (!thread || !e.target.message) return { status: 'ignored', reason: 'not a thread the bot started' };
  const transport = e.target.message.transport;
  const reply = (icon: string, text: RichText | RichText[]): void => {
    const lines = Array.isArray(text[0]) ? (text as RichText[]) : [text as RichText];
    notify(c, thread.openId, [transport], { topic: 'note', icon, text: lines.flat() });
  };
  const limit = (c.d.questions ?? DEFAULT_QUESTIONS).perThreadPerHour;
  const recent = (thread.questionTimes ?? []).filter((t) => c.now.getTime() - Date.parse(t) < HOUR);
  if (recent.length >= limit) {
    const next = new Date(Date.parse(recent[0]!) + HOUR).toISOString();
    tellRefusal(c, {
      thread,
      actor: e.actor,
      where: e.target.message,
      kind: 'question',
      eventId: e.eventId,
      text: [`⏳ question not answered: this thread had ${limit} questions in the last hour; ask again after ${shortTime(next, c.now)}`],
    });
    return { status: 'refused', reason: `question limit: ${limit} per thread per hour` };
  }
  const index = c.tx.size;
  const model = c.d.questionModel;
  const budget = model?.dailyTokenBudget;
  const overBudget = budget !== undefined && c.read.tokensSpent(utcDay(c.now)) >= budget;
  const useModel = model !== undefined && !overBudget;
  c.tx.record({
    type: 'question',
    triggerKey: thread.triggerKey,
    openId: thread.openId,
    user: ledgerUser(e.actor),
    via: e.actor.via,
    model: useModel,
    eventId: e.eventId,
    at: c.now.toISOString(),
  });
  const lines = knownAnswer(c, thread, transport);
  if (useModel) {
    // The model answers after this is durable (an effect, never here); the question, the alert and
    // what is known go to it as data only.
    const known = lines.map(plain).join('\n');
    const alert = thread.alert ?? { alertname: thread.triggerKey.split('|')[0] ?? 'alert', title: thread.triggerKey };
    c.effects.push({
      type: 'ask_question',
      ask: { openId: thread.openId, triggerKey: thread.triggerKey, transport, messages: questionMessages(alert, thread.triggerKey, known, e.text) },
    });
    c.log.info({ trigger: thread.triggerKey, user: ledgerUser(e.actor) }, 'question asked of the model');
    return { status: 'recorded', kind: 'question', triggerKey: thread.triggerKey, event: { type: 'question' }, index };
  }
  if (overBudget) lines.push([`🤖 not asked of the model: the daily token budget (${budget}) is spent; resets at midnight UTC`]);
  // One notice: its lines joined, each on its own line.
  reply(
    '💬',
    lines.flatMap((l, i) => (i === 0 ? l : ['\n', ...l])),
  );
  c.log.info({ trigger: thread.triggerKey, user: ledgerUser(e.actor) }, 'question answered from the ledger and the catalog');
  return { status: 'recorded', kind: 'question', triggerKey: thread.triggerKey, event: { type: 'question' }, index };
}

/** A rich line as plain text (what the model is shown of it). */
function plain(line: RichText): string {
  return line.map((x) => (typeof x === 'string' ? x : 'code' in x ? x.code : 'link' in x ? x.link.label : 'person' in x ? personLabel(x.person) : '')).join('');
}

const usd = (v: number): string => (v >= 0.01 ? `$${v.toFixed(2)}` : `$${v.toFixed(4)}`);

/**
 * The model's answer to a thread question: recorded with what it cost (counted in the day's
 * budget) and replied in the thread in one fixed shape — what is known, then the model's words as
 * plain text, then its cost. Nothing the model says can change that shape or add a mention.
 */
export function decideQuestionAnswered(c: Ctx, e: QuestionAnswered): { status: 'recorded'; reason?: string } {
  const thread = c.read.thread(e.openId);
  const reply = 'reply' in e ? e.reply : undefined;
  c.tx.record({
    type: 'question_answered',
    triggerKey: e.triggerKey,
    openId: e.openId,
    status: reply ? 'answered' : 'failed',
    ...(reply ? { model: reply.model } : {}),
    calls: reply ? 1 : 0,
    tokensIn: reply?.tokensIn ?? 0,
    tokensOut: reply?.tokensOut ?? 0,
    ...(reply && reply.costUsd !== null ? { costUsd: reply.costUsd } : {}),
    at: c.now.toISOString(),
  });
  if (!thread) return { status: 'recorded', reason: 'the thread is no longer known' };
  const lines = knownAnswer(c, thread, e.transport);
  if (reply) {
    const text = questionAnswerText(reply.content) || 'the model gave no answer';
    const tokens = reply.tokensIn + reply.tokensOut;
    lines.push([`🤖 ${text}`]);
    lines.push([`(model ${reply.model} · 1 call · ${tokens} tokens${reply.costUsd !== null ? ` · ${usd(reply.costUsd)}` : ''})`]);
  } else lines.push([`🤖 the model could not answer (${'error' in e ? e.error.slice(0, 160) : 'no reply'}); this is what the ledger and the catalog know`]);
  notify(c, thread.openId, [e.transport], { topic: 'note', icon: '💬', text: lines.flatMap((l, i) => (i === 0 ? l : ['\n', ...l])) });
  return { status: 'recorded' };
}

/**
 * What people told the bot about an incident, as the read model keeps it (issue 21 items 3, 4):
 * the human fixes and operator notes of a trigger (newest few, for the next occurrence's
 * "what fixed it last time?" and a fix's entry draft), and the questions asked per thread (the
 * hourly limit survives restarts).
 */
import type { FixEvent, NoteEvent, QuestionEvent, RefusalEvent } from '../ledger-events.js';
import { rememberChatEvent } from './ledger-chat.js';
import type { HumanTextRecord, LedgerState, TriggerState } from './ledger-types.js';

/** Fixes and notes kept per trigger. */
const KEPT = 10;
/** Question times kept per thread (more than any hourly limit a config may set is pointless). */
const QUESTION_TIMES = 50;

type TriggerOf = (state: LedgerState, key: string) => TriggerState;

function keep(list: HumanTextRecord[], e: FixEvent | NoteEvent): void {
  list.push({ user: e.user, via: e.via, text: e.text, at: e.at, ...(e.openId !== undefined ? { openId: e.openId } : {}) });
  while (list.length > KEPT) list.shift();
}

export function applyFix(state: LedgerState, e: FixEvent, trigger: TriggerOf): void {
  keep((trigger(state, e.triggerKey).fixes ??= []), e);
  const thread = e.openId === undefined ? undefined : state.threads[e.openId];
  if (thread) thread.fixes = (thread.fixes ?? 0) + 1;
  rememberChatEvent(state, e.eventId, e.at);
}

/** A note's text, kept with its trigger (its count per thread is `applyNote`'s). */
export function keepNote(state: LedgerState, e: NoteEvent, trigger: TriggerOf): void {
  keep((trigger(state, e.triggerKey).notes ??= []), e);
}

export function applyQuestion(state: LedgerState, e: QuestionEvent): void {
  rememberChatEvent(state, e.eventId, e.at);
  const thread = state.threads[e.openId];
  if (!thread) return;
  const times = (thread.questionTimes ??= []);
  times.push(e.at);
  while (times.length > QUESTION_TIMES) times.shift();
}

/** People remembered per thread for the once-per-window refusal (the oldest forgotten first). */
const REFUSAL_PEOPLE = 50;

export function applyRefusal(state: LedgerState, e: RefusalEvent): void {
  rememberChatEvent(state, e.eventId, e.at);
  const thread = state.threads[e.openId];
  if (!thread) return;
  const told = (thread.refusalsTold ??= {});
  delete told[e.user];
  told[e.user] = e.at;
  const people = Object.keys(told);
  for (const u of people.slice(0, Math.max(0, people.length - REFUSAL_PEOPLE))) delete told[u];
}

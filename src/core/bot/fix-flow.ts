/**
 * "What fixed it?" (issue 21 item 4): a person says what fixed an incident (`@reprise fixed: …`,
 * `!reprise fixed …`, `reprise fixed <trigger> …`); it is recorded with the incident and — when a
 * forge is configured — becomes an Incident entry draft through the curator, like a Finding. When
 * an incident no instant recall answered resolves, the thread asks for it once.
 */
import { fixSyntax } from '../chat/surface-syntax.js';
import { tellRefusal } from './refusal.js';
import { randomUUID } from 'node:crypto';
import type { Actor, ChatIntent, Target } from '../chat/chat-types.js';
import type { RichText } from '../chat/thread-view.js';
import { afterKeyword } from '../chat/thread-text.js';
import { RepriseError } from '../errors.js';
import { HOST_KINDS, NOT_WORKLOAD_KINDS } from '../identity.js';
import type { FixMaterial, OpenAlert } from '../ledger-events.js';
import { catalogResource } from '../curate/plan-curation.js';
import type { Incident } from '../types.js';
import { notify, actorRun, displayName, ledgerUser, type Ctx, type ThreadInfo } from './bot-context.js';
import type { ChatOutcome, FixOptions } from './bot-context.js';
import { episodeFacts } from './episode-facts.js';
import { fixOutcomes } from '../curate/fix-outcomes.js';

export const DEFAULT_FIXES: FixOptions = { ask: true, maxBytes: 8 * 1024, perThread: 5 };

type Fixed = Omit<Extract<ChatIntent, { type: 'fixed' }>, 'eventId'> & { eventId?: string };

/** The alert as an open keeps it for a fix's draft: capped, plain text (neutralised where it is written). */
export function openAlert(incident: Incident): OpenAlert {
  const resource = catalogResource(incident);
  const w = incident.workload;
  const where = w ? [w.cluster, w.namespace, w.name].filter(Boolean).join('/') : '';
  const message = (incident.message ?? '').trim().slice(0, 2000);
  return {
    alertname: incident.alertname.slice(0, 200),
    title: (incident.title || incident.alertname).slice(0, 300),
    ...(message ? { message } : {}),
    ...(resource ? { resource } : {}),
    ...(where ? { where } : {}),
  };
}

/** An alert for a thread whose open recorded none (older ledgers): what its trigger key says. */
function alertOf(thread: ThreadInfo): OpenAlert {
  if (thread.alert) return { ...thread.alert };
  const [alertname = 'alert', namespace, kind = '', name] = thread.triggerKey.split('|');
  const resource = name && HOST_KINDS.has(kind) ? `host/${name}` : namespace && name && !NOT_WORKLOAD_KINDS.has(kind) ? `${namespace}/${name}` : undefined;
  return { alertname, title: alertname, ...(resource ? { resource } : {}) };
}

/** A note that says something was tried and did not help. */
const TRIED = /\b(did(?:n'?t| not) (?:work|help|fix)|no effect|not the (?:cause|fix)|made (?:it|things) worse|tried\b)/i;

/** The cause, the tried-and-failed and the alert of a fix's draft, from what the ledger holds. */
export function fixMaterial(c: Pick<Ctx, 'read' | 'now'>, thread: ThreadInfo, e: { actor: Actor; text: string }): FixMaterial {
  // This episode's notes and 👎 only: a draft never reports what was said of another occurrence.
  const facts = episodeFacts(thread);
  const notes = c.read.humanNotes(thread.triggerKey).filter(facts.owns);
  const causeNote = [...notes].reverse().find((n) => afterKeyword(n.text.trim(), 'cause'));
  const cause = causeNote ? afterKeyword(causeNote.text.trim(), 'cause') : c.read.standing(thread.triggerKey)?.cause;
  const tried: string[] = [];
  const down = facts.downVoters.length > 0;
  if (down && thread.entry) tried.push(`The answer from ${thread.entry} (judged off-base with 👎)`);
  else if (down) {
    const standing = c.read.standing(thread.triggerKey);
    if (standing) tried.push(`${standing.cause} (the investigation's answer, judged off-base with 👎)`);
  }
  for (const n of notes) if (TRIED.test(n.text) && !afterKeyword(n.text.trim(), 'cause')) tried.push(n.text.trim().slice(0, 1000));
  const at = c.now.toISOString();
  // How often each of the trigger's fixes worked, this one included: the order of the entry's list.
  const outcomes = fixOutcomes(c.read, thread.triggerKey, c.now, { name: displayName(e.actor), via: e.actor.via, text: e.text, at, openId: thread.openId });
  return {
    user: ledgerUser(e.actor),
    name: displayName(e.actor),
    via: e.actor.via,
    text: e.text,
    at,
    alert: alertOf(thread),
    ...(cause
      ? {
          cause: cause.slice(0, 2000),
          causeBy: causeNote ? { name: causeNote.user.replace(/^[a-z][a-z0-9_-]*:(?=.)/, ''), via: causeNote.via } : { model: '' },
        }
      : {}),
    triedAndFailed: tried.slice(-5),
    outcomes: outcomes.slice(-20),
  };
}

function resolveThread(c: Ctx, target: Target): ThreadInfo | undefined {
  if (target.message) return c.read.threadByMessage(target.message);
  return target.triggerKey ? c.read.newestThread(target.triggerKey) : undefined;
}

/**
 * `fixed: …` on a thread (or, from the CLI, on the trigger's newest thread).
 * @throws RepriseError `not_found` when the CLI names a trigger without a thread.
 */
export function decideFixed(c: Ctx, e: Fixed): ChatOutcome {
  if (e.eventId !== undefined && c.read.seenChatEvent(e.eventId)) return { status: 'duplicate', reason: `event ${e.eventId} was already recorded` };
  if (!(c.d.allow ?? (() => true))(e.actor)) return { status: 'refused', reason: `${e.actor.via} user ${e.actor.id} is not on the allowlist` };
  const thread = resolveThread(c, e.target);
  if (!thread) {
    if (e.target.message) return { status: 'ignored', reason: 'not a thread the bot started' };
    throw new RepriseError('not_found', `no incident thread for trigger ${e.target.triggerKey ?? '?'}; a fix is written on an incident the bot posted`);
  }
  const tell = e.target.message ? [e.target.message.transport] : thread.transports;
  const reply = (icon: string, text: RichText): void => notify(c, thread.openId, tell, { topic: 'note', icon, text });
  const opts = c.d.fixes ?? DEFAULT_FIXES;
  const text = e.text.trim();
  const refuse = (line: RichText, reason: string): ChatOutcome => {
    tellRefusal(c, {
      thread,
      actor: e.actor,
      ...(e.target.message ? { where: e.target.message } : {}),
      kind: 'fix',
      ...(e.eventId ? { eventId: e.eventId } : {}),
      text: ['⚠️ ', ...line],
    });
    return { status: 'refused', reason };
  };
  if (text === '') return refuse(['fix not saved: say what fixed it, e.g. ', { code: 'fixed: rolled back deploy 4f2a1c' }], 'empty fix: say what fixed it');
  if (Buffer.byteLength(text) > opts.maxBytes) {
    const kib = Math.round(opts.maxBytes / 1024);
    return refuse(
      [`fix not saved: it is longer than ${kib} KiB; say what fixed it in a few lines and link to a document`],
      `fix too long: more than ${kib} KiB`,
    );
  }
  if ((thread.fixes ?? 0) >= opts.perThread) return refuse([`fix not saved: this thread already has ${opts.perThread} fixes`], 'too many fixes in this thread');
  const at = c.now.toISOString();
  const user = ledgerUser(e.actor);
  // Gathered before the fix is recorded: the material is what the thread knew when it was said.
  const material = fixMaterial(c, thread, { actor: e.actor, text });
  const index = c.tx.size;
  c.tx.record({
    type: 'fix',
    triggerKey: thread.triggerKey,
    openId: thread.openId,
    user,
    text,
    via: e.actor.via,
    ...(e.eventId ? { eventId: e.eventId } : {}),
    at,
  });
  if (c.d.curation) {
    c.tx.record({
      type: 'curate',
      id: randomUUID(),
      subject: 'fix',
      openId: thread.openId,
      triggerKey: thread.triggerKey,
      dupFingerprint: thread.dupFingerprint ?? '',
      fix: material,
      at,
    });
    c.effects.push({ type: 'curate' });
    reply('🛠', ['saved — fix from ', actorRun(e.actor), ' recorded; filing it with the knowledge base for review']);
  } else reply('🛠', ['saved — fix from ', actorRun(e.actor), ' recorded with this incident; the next time it fires, the thread can say what fixed it']);
  c.log.info({ trigger: thread.triggerKey, user, bytes: Buffer.byteLength(text) }, 'fix recorded');
  return { status: 'recorded', kind: 'fixed', triggerKey: thread.triggerKey, event: { type: 'fix' }, index };
}

/**
 * The resolve notice's question, per surface, when the thread should ask what fixed it: an
 * incident no instant recall answered, no one has said the fix of yet, asking on (the config,
 * and the routing rule's say). Undefined when it should not ask. It is part of the resolve's
 * one notice ("✅ resolved after 23 min — what fixed it? Reply …"), never a second message.
 */
export function askWhatFixed(c: Ctx, thread: ThreadInfo, resolvedNote: string, incident: Incident): ((transport: string) => RichText) | undefined {
  const opts = c.d.fixes ?? DEFAULT_FIXES;
  const rule = c.d.routing.askFix?.(incident);
  if (!(rule ?? opts.ask)) return undefined;
  if (thread.answerKind === 'incident' && thread.entry) return undefined;
  if ((thread.fixes ?? 0) > 0) return undefined;
  return (transport) => [`${resolvedNote} — what fixed it? Reply `, { code: fixSyntax(transport) }];
}

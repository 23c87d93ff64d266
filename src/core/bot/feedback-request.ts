import { z } from 'zod';
import type { LedgerReader } from '../ledger/ledger-reader.js';
import { tryParseDuration } from '../duration.js';
import { closeMatches } from '../close-matches.js';
import { RepriseError } from '../errors.js';
import type { FeedbackEvent, SilenceEvent } from '../ledger-events.js';
import type { Actor } from '../chat/chat-types.js';
import type { ChatOutcome } from './bot-context.js';
import type { Intent } from './intent.js';

/** The longest silence one person may set: a forgotten 🔕 must not hide an alert for months. */
export const MAX_SILENCE_MS = 30 * 86_400_000;

/** Feedback from any surface (CLI, control API, chat buttons), before it becomes an event. */
/**
 * Names are shown in threads and logs: no control characters (terminal escapes, newlines), no
 * format characters (bidi overrides, zero-width joiners) that would make one name look like
 * another.
 */
const PRINTABLE = /^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+$/u;
const printable = (what: string) =>
  z
    .string()
    .min(1)
    .max(128)
    .regex(PRINTABLE, { error: `${what} must be printable text (no control, bidi or zero-width characters)` });

export const feedbackRequestSchema = z.object({
  triggerKey: z.string().min(1).max(512).regex(PRINTABLE, { error: 'trigger key must be printable text' }),
  user: printable('user').default('cli'),
  action: z.enum(['up', 'down', 'clear', 'silence']),
  /** Silence only: `1h`, `4h`, `24h`, … */
  duration: z.string().max(32).optional(),
  /** Where it came from (`cli`, `slack`, `matrix`); recorded with the event. */
  via: z
    .string()
    .min(1)
    .max(32)
    .regex(/^[a-z][a-z0-9_-]*$/, { error: 'via must be a short lower-case name' })
    .optional(),
});

/**
 * Validates a feedback request and turns it into the ledger event it means.
 * @throws RepriseError `invalid_payload` naming the problem.
 */
export function feedbackEvent(input: unknown, now: Date): FeedbackEvent | SilenceEvent {
  const parsed = feedbackRequestSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RepriseError('invalid_payload', `feedback ${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`);
  }
  const r = parsed.data;
  const at = now.toISOString();
  const via = r.via === undefined ? {} : { via: r.via };
  if (r.action !== 'silence') return { type: 'feedback', triggerKey: r.triggerKey, user: r.user, vote: r.action, ...via, at };
  const ms = r.duration === undefined ? undefined : tryParseDuration(r.duration);
  if (ms === undefined || ms <= 0) {
    throw new RepriseError('invalid_payload', `silence needs a duration like 1h, 4h or 24h (got ${JSON.stringify(r.duration ?? null)})`);
  }
  if (ms > MAX_SILENCE_MS) throw new RepriseError('invalid_payload', `silence of ${r.duration} is longer than the 30d maximum`);
  return { type: 'silence', triggerKey: r.triggerKey, user: r.user, until: new Date(now.getTime() + ms).toISOString(), ...via, at };
}

/** What the unknown-trigger check reads from the ledger. */
export interface KnownTriggers {
  read: Pick<LedgerReader, 'knowsTrigger' | 'triggerKeys'>;
}

/**
 * {@link feedbackEvent}, refusing a trigger the ledger has never seen: a typo must not record
 * a vote nobody will ever read, or a silence that silences nothing.
 * @throws RepriseError `not_found` naming close matches.
 */
export function feedbackForKnownTrigger(ledger: KnownTriggers, input: unknown, now: Date): FeedbackEvent | SilenceEvent {
  const event = feedbackEvent(input, now);
  if (!ledger.read.knowsTrigger(event.triggerKey)) {
    const near = closeMatches(event.triggerKey, ledger.read.triggerKeys(), 3);
    const hint =
      near.length > 0 ? `; did you mean ${near.map((k) => JSON.stringify(k)).join(' or ')}?` : '; `reprise ledger events` lists what it has recorded';
    throw new RepriseError('not_found', `the ledger has never seen trigger ${JSON.stringify(event.triggerKey)}${hint}`);
  }
  return event;
}

/**
 * A feedback request from the CLI or the control socket as the intent it means: a vote or a
 * silence on the trigger (and its newest thread), as user `user` via `via` (default `cli`).
 * @throws RepriseError `invalid_payload` for a bad request, `not_found` for an unknown trigger.
 */
export function feedbackIntent(ledger: KnownTriggers, input: unknown, now: Date): Extract<Intent, { type: 'vote' | 'silence' }> {
  const event = feedbackForKnownTrigger(ledger, input, now);
  const actor: Actor = { id: event.user, via: event.via ?? 'cli' };
  const target = { triggerKey: event.triggerKey };
  if (event.type === 'feedback') return { type: 'vote', actor, vote: event.vote, target };
  return { type: 'silence', actor, duration: (input as { duration: string }).duration, target };
}

/** The outcome of an action the CLI asked for, or why it was not recorded. */
export function recordedOrThrow(o: { status: string } | undefined, what: string): Extract<ChatOutcome, { status: 'recorded' }> {
  if (o?.status === 'recorded' && 'kind' in o) return o as Extract<ChatOutcome, { status: 'recorded' }>;
  throw new RepriseError('invalid_payload', `${what} not recorded: ${o && 'reason' in o ? String(o.reason) : 'nothing was recorded'}`);
}

export interface NoteRequest {
  triggerKey: string;
  text: string;
  user?: string;
}

/** A note request from the CLI or the control socket, checked. */
export function noteRequest(body: unknown): NoteRequest {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const key = b['triggerKey'];
  const text = b['text'];
  const user = b['user'];
  if (typeof key !== 'string' || key.trim() === '') throw new RepriseError('invalid_payload', 'triggerKey must be a non-empty string');
  if (typeof text !== 'string' || text.trim() === '') throw new RepriseError('invalid_payload', 'text must be a non-empty string');
  if (user !== undefined && (typeof user !== 'string' || user.trim() === '' || user.length > 200))
    throw new RepriseError('invalid_payload', 'user must be a non-empty string');
  return { triggerKey: key.trim(), text, ...(typeof user === 'string' ? { user } : {}) };
}

export interface AckRequest {
  triggerKey: string;
  user?: string;
}

/** An ack request from the CLI or the control socket, checked. */
export function ackRequest(body: unknown): AckRequest {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const key = b['triggerKey'];
  const user = b['user'];
  if (typeof key !== 'string' || key.trim() === '') throw new RepriseError('invalid_payload', 'triggerKey must be a non-empty string');
  if (user !== undefined && (typeof user !== 'string' || user.trim() === '' || user.length > 200))
    throw new RepriseError('invalid_payload', 'user must be a non-empty string of at most 200 characters');
  return { triggerKey: key.trim(), ...(typeof user === 'string' ? { user } : {}) };
}

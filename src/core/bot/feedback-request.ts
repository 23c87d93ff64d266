import { z } from 'zod';
import { tryParseDuration } from '../../config/duration.js';
import { RepriseError } from '../errors.js';
import type { FeedbackEvent, SilenceEvent } from '../ledger-events.js';

/** The longest silence one person may set: a forgotten 🔕 must not hide an alert for months. */
export const MAX_SILENCE_MS = 30 * 86_400_000;

/** Feedback from any surface (CLI, control API, chat buttons), before it becomes an event. */
export const feedbackRequestSchema = z.object({
  triggerKey: z.string().min(1).max(512),
  user: z.string().min(1).max(128).default('cli'),
  action: z.enum(['up', 'down', 'clear', 'silence']),
  /** Silence only: `1h`, `4h`, `24h`, … */
  duration: z.string().max(32).optional(),
});
export type FeedbackRequest = z.input<typeof feedbackRequestSchema>;

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
  if (r.action !== 'silence') return { type: 'feedback', triggerKey: r.triggerKey, user: r.user, vote: r.action, at };
  const ms = r.duration === undefined ? undefined : tryParseDuration(r.duration);
  if (ms === undefined || ms <= 0) {
    throw new RepriseError('invalid_payload', `silence needs a duration like 1h, 4h or 24h (got ${JSON.stringify(r.duration ?? null)})`);
  }
  if (ms > MAX_SILENCE_MS) throw new RepriseError('invalid_payload', `silence of ${r.duration} is longer than the 30d maximum`);
  return { type: 'silence', triggerKey: r.triggerKey, user: r.user, until: new Date(now.getTime() + ms).toISOString(), at };
}

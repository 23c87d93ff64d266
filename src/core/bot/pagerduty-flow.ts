/**
 * PagerDuty both ways (issue 21 item 2). Into the loop, its webhooks are chat intents like any
 * surface's (an ack, a note, by the alert's fingerprint; see ack-flow for the echo rule). Out of
 * it: the acknowledge call a chat ack asked for, made by an effect after the ack
 * is durable; each attempt's outcome comes back here, is recorded, and a retryable failure is
 * tried again with backoff (never blocking chat) until it succeeds or the attempts run out.
 */
import type { Logger } from '../../ports/logger.js';
import { notify, type Ctx, type PagerDutyPort } from './bot-context.js';
import type { PagerDutyAckRequest } from './effects.js';

/** A PagerDuty call that failed; `retryable` false when trying again cannot help (401, 403, 404, 400). */
export class PagerDutyCallError extends Error {
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, opts: { retryable: boolean; retryAfterMs?: number; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'PagerDutyCallError';
    this.retryable = opts.retryable;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** What one attempt of a PagerDuty call came to. */
export interface PagerDutyCallOutcome {
  type: 'pagerduty_call_result';
  req: PagerDutyAckRequest;
  outcome: 'done' | 'retry' | 'failed';
  detail?: string;
  retryAfterMs?: number;
}

/** Makes one attempt (the effect's network half); never throws — a failure is an outcome. */
export async function acknowledgeInPagerDuty(
  d: { pagerDuty: PagerDutyPort; maxAttempts: number; logger: Logger },
  req: PagerDutyAckRequest,
): Promise<PagerDutyCallOutcome> {
  try {
    await d.pagerDuty.acknowledge(req.incidentId);
    d.logger.info({ incident: req.incidentId, attempt: req.attempt }, 'acknowledged in PagerDuty');
    return { type: 'pagerduty_call_result', req, outcome: 'done' };
  } catch (err) {
    const retryable = !(err instanceof PagerDutyCallError) || err.retryable;
    const detail = (err as Error).message.slice(0, 300);
    const last = req.attempt >= d.maxAttempts;
    d.logger.warn({ err, incident: req.incidentId, attempt: req.attempt, retryable }, 'PagerDuty acknowledge failed');
    const retryAfterMs = err instanceof PagerDutyCallError ? err.retryAfterMs : undefined;
    return {
      type: 'pagerduty_call_result',
      req,
      outcome: retryable && !last ? 'retry' : 'failed',
      detail: retryable && last ? `${detail} (gave up after ${req.attempt} attempts)` : detail,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    };
  }
}

/** Records an attempt's outcome; a retry is asked for again, a final failure is said in the thread. */
export function decidePagerDutyCall(c: Ctx, o: PagerDutyCallOutcome): { status: 'recorded'; reason: string } {
  c.tx.record({
    type: 'pagerduty_call',
    requestId: o.req.requestId,
    incidentId: o.req.incidentId,
    action: 'acknowledge',
    outcome: o.outcome,
    attempt: o.req.attempt,
    ...(o.detail ? { detail: o.detail.slice(0, 500) } : {}),
    ...(o.req.openId ? { openId: o.req.openId } : {}),
    at: c.now.toISOString(),
  });
  if (o.outcome === 'retry') {
    c.effects.push({
      type: 'pagerduty_ack',
      req: { ...o.req, attempt: o.req.attempt + 1, ...(o.retryAfterMs !== undefined ? { retryAfterMs: o.retryAfterMs } : {}) },
    });
    return { status: 'recorded', reason: 'retry' };
  }
  const thread = o.req.openId ? c.read.thread(o.req.openId) : undefined;
  const text = o.outcome === 'done' ? 'also acknowledged in PagerDuty' : `not acknowledged in PagerDuty: ${o.detail ?? 'the call failed'}`;
  if (thread) notify(c, thread.openId, thread.transports, { topic: 'status', icon: o.outcome === 'done' ? '👀' : '⚠️', text: [text] });
  return { status: 'recorded', reason: o.outcome };
}

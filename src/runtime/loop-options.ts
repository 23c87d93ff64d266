/**
 * What the configuration says about the loop's decisions — recall's gates, the trigger policy,
 * noise control, the investigation wait — and about delivery: one mapping, used by `serve`, the
 * offline CLI and `demo` alike.
 */
import { onCallConfigured } from './build-oncall.js';
import type { Config } from '../config/schema.js';
import type { NoiseOptions } from '../core/bot/noise-control.js';
import { TriggerPolicy } from '../core/bot/trigger-policy.js';
import type { LoopParts } from './build-loop.js';
import { recallOptions } from './recall-options.js';

export function noiseOptions(config: Config): NoiseOptions {
  const c = config.trigger.coalesce;
  return {
    debounceMs: config.trigger.debounce_ms,
    cooldownMs: config.ledger.recurrence_cooldown_ms,
    ...(c.enabled ? { coalesce: { group: c.group, labels: c.labels, debounceMs: c.debounce_ms, maxWaitMs: c.max_wait_ms, maxAlerts: c.max_alerts } } : {}),
  };
}

/** PagerDuty's retry rules, when its REST API is configured (token and From); the serving bot adds the client. */
export function pagerDutyOptions(config: Config): LoopParts['pagerDuty'] {
  const p = config.pagerduty;
  if (!p.token || !p.from) return undefined;
  return { maxAttempts: p.max_attempts, backoff: { baseMs: p.retry_base_ms, maxMs: p.retry_max_ms, jitter: 0.2 } };
}

export function loopOptions(
  config: Config,
): Pick<
  LoopParts,
  'recall' | 'policy' | 'noise' | 'investigateAfterMs' | 'outbox' | 'pagerDuty' | 'fixes' | 'questions' | 'refusalWindowMs' | 'uiLink' | 'onCall'
> {
  const pagerDuty = pagerDutyOptions(config);
  const publicUrl = config.server.public_url;
  return {
    ...(pagerDuty ? { pagerDuty } : {}),
    ...(onCallConfigured(config) ? { onCall: { remindAfterMs: config.oncall.remind_after_ms } } : {}),
    // The card's "N more" links into /ui at the address people reach it by.
    ...(publicUrl ? { uiLink: (path: string) => `${publicUrl.replace(/\/+$/, '')}${path}` } : {}),
    fixes: { ask: config.thread.ask_fix, maxBytes: config.thread.fix_max_bytes, perThread: config.thread.fixes_per_thread },
    questions: { perThreadPerHour: config.thread.questions_per_hour },
    refusalWindowMs: config.thread.refusal_window_ms,
    recall: recallOptions(config),
    policy: new TriggerPolicy({ match: config.trigger.match, ignore: config.trigger.ignore, dedupWindowMs: config.trigger.dedup_window_ms }),
    noise: noiseOptions(config),
    investigateAfterMs: config.trigger.investigate_after_ms,
    outbox: {
      concurrency: config.outbox.concurrency,
      window: config.outbox.window,
      baseDelayMs: config.outbox.retry_base_ms,
      maxDelayMs: config.outbox.retry_max_ms,
      maxAgeMs: config.outbox.max_age_ms,
      answerMaxAgeMs: config.outbox.answer_max_age_ms,
      duplicateWatchMs: config.outbox.duplicate_watch_ms,
      duplicateSweepMs: [config.outbox.duplicate_sweep_ms, config.outbox.duplicate_sweep_again_ms].filter((ms) => ms > 0),
    },
  };
}

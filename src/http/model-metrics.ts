/**
 * Model series (issue 7 item 3): every call through the model port, by the configured model's
 * role, the engine's purpose and the outcome; its tokens and latency; and the day's token
 * budget read from the ledger at scrape time, so an alert can fire when it runs out.
 * The port is wrapped in the shell: the engine does not know it is measured.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { MODEL_ERROR_CODES, ModelError, type ModelPort, type ModelSet } from '../ports/model.js';
import { bounded } from './loop-metrics.js';
import { DEFAULT_BUCKETS } from './metrics.js';

export const MODEL_ROLES = ['main', 'verify', 'rerank', 'fallback'] as const;
export type ModelRole = (typeof MODEL_ROLES)[number];
export const CALL_PURPOSES = ['rerank', 'verify', 'investigate', 'repair', 'question'] as const;
export const CALL_OUTCOMES = ['ok', ...MODEL_ERROR_CODES] as const;

export interface ModelMetrics {
  /** The same models, each call counted under its role. */
  meter(models: ModelSet): ModelSet;
}

export interface DailyBudgetSource {
  /** `model.daily_token_budget`; undefined = no daily budget. */
  budget: number | undefined;
  /** Tokens the investigations recorded today (UTC), read at scrape time. */
  spentToday(): number;
}

export function registerModelMetrics(registry: Registry, daily: DailyBudgetSource): ModelMetrics {
  const calls = new Counter({
    name: 'reprise_model_calls_total',
    help: 'Model calls by configured role (main, verify, rerank, fallback), purpose (rerank, verify, investigate, repair) and outcome (ok or the error code).',
    labelNames: ['role', 'purpose', 'outcome'] as const,
    registers: [registry],
  });
  const tokens = new Counter({
    name: 'reprise_model_tokens_total',
    help: 'Tokens the model reported, by role and type (prompt, completion).',
    labelNames: ['role', 'type'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'reprise_model_call_duration_seconds',
    help: 'Model call latency, by role (answers and errors alike).',
    labelNames: ['role'] as const,
    buckets: DEFAULT_BUCKETS,
    registers: [registry],
  });
  new Gauge({
    name: 'reprise_model_daily_tokens_spent',
    help: "Tokens today's investigations recorded (UTC day; the daily budget counts these).",
    registers: [registry],
    collect() {
      this.set(daily.spentToday());
    },
  });
  if (daily.budget !== undefined) {
    const budget = daily.budget;
    new Gauge({ name: 'reprise_model_daily_token_budget', help: 'The configured daily token budget (model.daily_token_budget).', registers: [registry] }).set(
      budget,
    );
    new Gauge({
      name: 'reprise_model_daily_tokens_remaining',
      help: 'Tokens the daily budget still allows today (0 = exhausted; resets at midnight UTC).',
      registers: [registry],
      collect() {
        this.set(Math.max(0, budget - daily.spentToday()));
      },
    });
  }
  new Gauge({
    name: 'reprise_model_daily_budget_exhausted',
    help: '1 when the daily token budget is spent (new investigations are skipped until midnight UTC); always 0 without a budget.',
    registers: [registry],
    collect() {
      this.set(daily.budget !== undefined && daily.spentToday() >= daily.budget ? 1 : 0);
    },
  });
  for (const role of MODEL_ROLES) {
    for (const type of ['prompt', 'completion']) tokens.inc({ role, type }, 0);
  }

  const wrap = (port: ModelPort, role: ModelRole): ModelPort => ({
    name: port.name,
    chat: async (req) => {
      const purpose = bounded(req.purpose, CALL_PURPOSES);
      const end = duration.startTimer({ role });
      try {
        const res = await port.chat(req);
        calls.inc({ role, purpose, outcome: 'ok' });
        tokens.inc({ role, type: 'prompt' }, Math.max(0, res.usage.input) || 0);
        tokens.inc({ role, type: 'completion' }, Math.max(0, res.usage.output) || 0);
        return res;
      } catch (err) {
        calls.inc({ role, purpose, outcome: err instanceof ModelError ? bounded(err.code, CALL_OUTCOMES) : 'other' });
        throw err;
      } finally {
        end();
      }
    },
  });
  return {
    meter: (m) => ({
      main: wrap(m.main, 'main'),
      verify: wrap(m.verify, 'verify'),
      rerank: wrap(m.rerank, 'rerank'),
      ...(m.fallback ? { fallback: wrap(m.fallback, 'fallback') } : {}),
    }),
  };
}

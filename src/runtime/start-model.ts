/**
 * The model's part of `serve` (issue 11): the investigator on the configured endpoint and MCP
 * servers, its memory read from the ledger, rerank as the match gate, and the job scheduler
 * that runs it after each open is recorded.
 */
import type { Config } from '../config/schema.js';
import type { Actor } from '../core/chat/chat-types.js';
import type { Intent } from '../core/bot/intent.js';
import { adHocIncident, plainAnswer } from '../core/bot/commands.js';
import { InvestigationJobs } from '../core/bot/investigation-jobs.js';
import { ledgerFindingStore, ledgerRecurrence, ledgerTokenMeter } from '../core/bot/ledger-memory.js';
import type { EphemeralView, RichText } from '../core/chat/thread-view.js';
import { priceOf, type PriceTable } from '../core/investigate/model-call.js';
import { rerank } from '../core/investigate/rerank.js';
import type { QuestionModel } from '../core/bot/bot-context.js';
import type { Ledger } from '../core/ledger/ledger.js';
import type { CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { LoopObserver } from '../ports/loop-observer.js';
import type { ModelPort, ModelSet } from '../ports/model.js';

export interface StartedModel {
  /** Makes the job scheduler for the loop's entrance (see `buildLoop`). */
  jobs(handle: (intent: Intent) => Promise<unknown>): InvestigationJobs;
  command: (text: string, actor: Actor) => Promise<EphemeralView>;
  /** Thread questions: one call on the main model, priced, within the daily token budget. */
  questionModel: QuestionModel;
  /** Closes the model's connections (MCP servers); stop the jobs first. */
  close(): Promise<void>;
}

export async function startModel(
  config: Config,
  deps: {
    catalog: () => CatalogSnapshot;
    ledger: Pick<Ledger, 'read'>;
    clock: Clock;
    logger: Logger;
    /** Metrics: recall decisions the model's match gate settles, on-demand investigations. */
    observer?: Pick<LoopObserver, 'recallDecided' | 'investigationEnded'>;
    /** Metrics: the configured models, wrapped so each call is counted. */
    meterModels?: (models: ModelSet) => ModelSet;
  },
): Promise<StartedModel> {
  const log = deps.logger.child({ component: 'investigator' });
  // Loaded here, not at the top: the model's SDKs (openai, MCP) cost a bot without a model
  // ~40 MB and a second of start-up, so only a configured model pays for them.
  const { buildInvestigator, modelSetFromConfig, rerankOptions } = await import('./build-investigator.js');
  const models = deps.meterModels && config.model ? deps.meterModels(modelSetFromConfig(config.model)) : undefined;
  const built = await buildInvestigator(config, {
    ...(models ? { models } : {}),
    catalog: deps.catalog,
    cwd: process.cwd(),
    findings: ledgerFindingStore(deps.ledger),
    recurrence: ledgerRecurrence(deps.ledger),
    meter: ledgerTokenMeter(deps.ledger),
    clock: deps.clock,
    logger: log,
  });
  for (const p of built.problems) log.warn(p);
  // Steps are kept with the result; the log gets them at debug level ("why did it say that?").
  const sink = (step: unknown): void => log.debug({ step }, 'investigation step');
  const rerankModels = [built.models.rerank, ...(built.models.fallback ? [built.models.fallback] : [])];
  const jobs = (handle: (intent: Intent) => Promise<unknown>): InvestigationJobs =>
    new InvestigationJobs({
      engine: {
        run: (req) => built.investigator.run(req, sink),
        rerank: (incident, candidates, signal) => rerank(incident, candidates, rerankModels, { ...rerankOptions(config), signal, clock: deps.clock, sink }),
      },
      ledger: deps.ledger,
      clock: deps.clock,
      logger: log,
      options: {
        investigateAfterMs: config.trigger.investigate_after_ms,
        outcomeFloor: config.recall.outcome_floor,
        maxPerHour: config.trigger.max_investigations_per_hour,
        resumeMaxAgeMs: config.model!.resume_max_age_ms,
      },
      handle,
      ...(deps.observer ? { observer: deps.observer } : {}),
    });
  const command = async (text: string, actor: Actor): Promise<EphemeralView> => {
    if (text.trim() === '') return plainAnswer('Investigate', 'Say what to investigate: `investigate checkout-api pods restarting in payments`.');
    const r = await built.investigator.run({ incident: adHocIncident(text, deps.clock.now()) }, sink);
    log.info({ user: `${actor.via}:${actor.id}`, status: r.status, calls: r.usage.calls }, 'on-demand investigation');
    deps.observer?.investigationEnded({ status: r.status, reason: r.reason ?? 'none' });
    const body: RichText[] = [];
    if (r.finding) {
      body.push([r.finding.summary]);
      r.finding.rootCauses.slice(0, 3).forEach((c, i) => body.push([`${i + 1}. ${c.cause} (${c.confidence.toFixed(2)})`]));
      for (const a of r.finding.suggestedActions.slice(0, 4)) body.push([`→ ${a.action} ${a.reversible ? '(reversible)' : '(NOT reversible)'}`]);
    } else body.push([r.detail]);
    body.push([`${r.status} · ${r.usage.calls} model calls · ${r.usage.input + r.usage.output} tokens`]);
    return { kind: 'ephemeral', title: `Investigation of “${text.slice(0, 80)}”`, body };
  };
  const m = config.model!;
  const questionModel = questionModelOf(built.models.main, {
    prices: m.prices,
    maxOutputTokens: m.max_output_tokens,
    ...(m.daily_token_budget !== undefined ? { dailyTokenBudget: m.daily_token_budget } : {}),
    logger: log,
  });
  return { jobs, command, questionModel, close: () => built.close() };
}

/** Thread questions on `model`: one call, no tools, a short answer, priced from `prices`. */
export function questionModelOf(
  model: ModelPort,
  o: { prices: PriceTable; maxOutputTokens: number; dailyTokenBudget?: number; logger: Logger },
): QuestionModel {
  return {
    ask: async (messages) => {
      const res = await model.chat({ messages, maxOutputTokens: Math.min(300, o.maxOutputTokens), purpose: 'question' });
      const costUsd = priceOf(o.prices, model.name, res.usage.input, res.usage.output);
      o.logger.info({ model: model.name, tokens: res.usage.input + res.usage.output, costUsd }, 'thread question answered by the model');
      return { content: res.content, model: model.name, tokensIn: res.usage.input, tokensOut: res.usage.output, costUsd };
    },
    ...(o.dailyTokenBudget !== undefined ? { dailyTokenBudget: o.dailyTokenBudget } : {}),
  };
}

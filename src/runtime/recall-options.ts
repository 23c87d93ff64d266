import type { Config } from '../config/schema.js';
import { defaultConfig } from '../config/load-config.js';
import type { RecallOptions } from '../core/recall/recall.js';

/** Maps the `recall` config section onto the engine's options. */
export function recallOptions(config: Config = defaultConfig()): RecallOptions {
  const r = config.recall;
  return {
    k: r.k,
    minScore: r.min_score,
    marginGap: r.margin_gap,
    soloFloor: r.solo_floor,
    outcomeFloor: r.outcome_floor,
    maxFallbacks: r.max_fallbacks,
    confidenceCap: r.confidence_cap,
    staleAfterMs: r.stale_after_ms,
    staleFactor: r.stale_factor,
    scopelessFactor: r.scopeless_factor,
    nameBoost: r.name_boost,
    siblingOverlap: r.sibling_overlap,
    siblingWindow: r.sibling_window,
    query: {
      summary: r.summary_weight,
      description: r.description_weight,
      labelNames: r.label_name_weight,
      exprMetrics: r.expr_metric_weight,
      exprLabels: r.expr_label_weight,
      runbookUrl: r.runbook_url_weight,
      exprMaxTerms: r.expr_max_terms,
    },
    unconfirmedCap: r.unconfirmed_cap,
    // No MCP tool servers exist yet, so the confirm step can never run.
    liveStateTools: false,
  };
}

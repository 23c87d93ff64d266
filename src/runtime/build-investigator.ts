/**
 * Builds the investigation engine from config: models on the openai adapter, MCP tool
 * servers, options. Shared by `reprise investigate`, `reprise eval investigate` and, later,
 * `serve` — one wiring, not one per command.
 */
import { parseOneShot, type Config, type ModelConfig, type ToolsConfig } from '../config/schema.js';
import { createOpenAIModel } from '../adapters/openai/openai-model.js';
import type { Clock } from '../ports/clock.js';
import { systemClock } from '../ports/clock.js';
import type { FindingStore, RecurrenceSource, TokenMeter } from '../ports/investigation-memory.js';
import type { Logger } from '../ports/logger.js';
import { silentLogger } from '../ports/logger.js';
import type { ModelSet } from '../ports/model.js';
import type { ToolProvider } from '../ports/tools.js';
import type { CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import { Investigator, type InvestigatorOptions } from '../core/investigate/investigator.js';
import { InMemoryFindingStore, InMemoryTokenMeter } from '../core/investigate/memory-stores.js';
import type { RerankOptions } from '../core/investigate/rerank.js';

/** The models a `model:` block configures: main, verify, rerank and the optional fallback. */
export function modelSetFromConfig(m: ModelConfig): ModelSet {
  const make = (model: string) =>
    createOpenAIModel({ baseUrl: m.base_url, model, ...(m.api_key ? { apiKey: m.api_key } : {}), timeoutMs: m.request_timeout_ms, maxRetries: m.max_retries });
  const main = make(m.model);
  const verify = m.verify_model ? make(m.verify_model) : main;
  const rerank = m.rerank_model ? make(m.rerank_model) : verify;
  return { main, verify, rerank, ...(m.fallback_model ? { fallback: make(m.fallback_model) } : {}) };
}

/** Connects every configured MCP server; one that cannot be reached is a problem, not a crash. */
export async function connectToolServers(tools: ToolsConfig, cwd: string): Promise<{ providers: ToolProvider[]; problems: string[] }> {
  const providers: ToolProvider[] = [];
  const problems: string[] = [];
  if (tools.servers.length === 0) return { providers, problems };
  // The MCP SDK (and its JSON-schema validators) loads only when a tool server is configured.
  const { connectMcpServer } = await import('../adapters/mcp/mcp-tool-provider.js');
  await Promise.all(
    tools.servers.map(async (s) => {
      try {
        providers.push(
          await connectMcpServer({
            name: s.name,
            access: s.access,
            transport: s.transport,
            ...(s.command ? { command: s.command } : {}),
            args: s.args,
            env: s.env,
            cwd,
            ...(s.url ? { url: s.url } : {}),
            headers: s.headers,
            connectTimeoutMs: tools.connect_timeout_ms,
          }),
        );
      } catch (err) {
        problems.push(`MCP server ${s.name} (${s.transport}) is unavailable: ${err instanceof Error ? err.message : String(err)}`);
      }
    }),
  );
  return { providers, problems };
}

/** Every number the engine enforces, read from config. */
export function investigatorOptions(config: Config): InvestigatorOptions {
  const m = config.model;
  if (!m) throw new Error('investigatorOptions needs a model block');
  const t = config.tools;
  const secrets = [m.api_key, ...t.servers.flatMap((s) => Object.values(s.headers))].filter((s): s is string => typeof s === 'string' && s.length > 0);
  return {
    maxSteps: m.max_steps,
    maxTokens: m.max_tokens,
    wallTimeMs: m.wall_time_ms,
    ...(m.daily_token_budget !== undefined ? { dailyTokenBudget: m.daily_token_budget } : {}),
    maxConcurrent: m.max_concurrent,
    maxOutputTokens: m.max_output_tokens,
    stepCapBytes: m.step_cap_bytes,
    tools: {
      allow: t.allow,
      scope: t.scope,
      callTimeoutMs: t.call_timeout_ms,
      resultCapBytes: t.result_cap_bytes,
      confirm: t.confirm,
      reviewCapBytes: t.review_cap_bytes,
    },
    unconfirmedCap: config.recall.unconfirmed_cap,
    prices: m.prices,
    secrets,
  };
}

/** The rerank gate's options from config (`recall.rerank_*`). */
export function rerankOptions(config: Config): Pick<RerankOptions, 'k' | 'threshold' | 'minScore' | 'prices' | 'stepCapBytes'> {
  return {
    k: config.recall.rerank_k,
    threshold: config.recall.rerank_threshold,
    minScore: config.recall.rerank_min_score,
    prices: config.model?.prices ?? {},
    stepCapBytes: config.model?.step_cap_bytes ?? 4096,
  };
}

export interface BuildDeps {
  catalog: () => CatalogSnapshot;
  cwd: string;
  findings?: FindingStore;
  recurrence?: RecurrenceSource;
  meter?: TokenMeter;
  clock?: Clock;
  logger?: Logger;
  /** Use these models instead of the configured endpoint (eval's scripted fake). */
  models?: ModelSet;
  /** Use these tool providers instead of connecting the configured servers. */
  tools?: ToolProvider[];
}

export interface BuiltInvestigator {
  investigator: Investigator;
  models: ModelSet;
  /** Servers that could not be reached. */
  problems: string[];
  close(): Promise<void>;
}

export async function buildInvestigator(config: Config, deps: BuildDeps): Promise<BuiltInvestigator> {
  if (!config.model && !deps.models) throw new Error('no model configured');
  const models = deps.models ?? modelSetFromConfig(config.model!);
  const { providers, problems } = deps.tools ? { providers: deps.tools, problems: [] } : await connectToolServers(config.tools, deps.cwd);
  const options = config.model ? investigatorOptions(config) : { ...investigatorOptions({ ...config, model: defaultModelBlock() }), secrets: [] };
  const investigator = new Investigator({
    models,
    tools: providers,
    catalog: deps.catalog,
    findings: deps.findings ?? new InMemoryFindingStore(),
    ...(deps.recurrence ? { recurrence: deps.recurrence } : {}),
    meter: deps.meter ?? new InMemoryTokenMeter(),
    clock: deps.clock ?? systemClock,
    logger: deps.logger ?? silentLogger,
    options,
  });
  return {
    investigator,
    models,
    problems,
    close: async () => {
      await Promise.all(providers.map((p) => p.close().catch(() => undefined)));
    },
  };
}

/** Budgets for a run without a configured endpoint (eval's scripted fake): the schema's defaults. */
export function defaultModelBlock(): ModelConfig {
  const r = parseOneShot({ model: { base_url: 'http://127.0.0.1/', model: 'scripted-fake' } });
  if (!r.success || !r.data.model) throw new Error('the model block has no usable defaults');
  return r.data.model;
}

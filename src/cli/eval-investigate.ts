/**
 * `reprise eval investigate`: replays recorded scenarios (incident, scripted tool results,
 * expected root-cause entities, distractors, the poisoned-entry case) N times against the
 * configured model with a k-of-n pass rule. Without a model it runs each scenario's scripted
 * fake and says so: that checks the harness and the engine, not a model.
 * `--memory` answers the same scenarios with recall off and on, side by side.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAlertmanagerPayload } from '../core/alertmanager.js';
import { parseEntry } from '../core/catalog/parse-entry.js';
import { kOfN, scoreRun, type RunScore, type ScenarioExpectation } from '../core/eval/investigate-score.js';
import { compareMemory, renderMemoryTable, type MemoryAnswer } from '../core/eval/memory-compare.js';
import { scriptedModel, type Script } from '../core/eval/scripted-model.js';
import { BUILTIN_TOOL_NAMES } from '../core/investigate/builtin-tools.js';
import { Investigator, type InvestigationResult } from '../core/investigate/investigator.js';
import { InMemoryFindingStore, InMemoryTokenMeter } from '../core/investigate/memory-stores.js';
import { buildCatalogSnapshot, type CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import { PostingsIndex } from '../core/search/postings-index.js';
import { LedgerReader } from '../core/ledger/ledger-reader.js';
import { recall } from '../core/recall/recall.js';
import type { Incident } from '../core/types.js';
import type { Config } from '../config/schema.js';
import { systemClock } from '../ports/clock.js';
import { silentLogger } from '../ports/logger.js';
import type { ModelSet } from '../ports/model.js';
import type { ToolProvider } from '../ports/tools.js';
import { parseCli } from './args.js';
import { defaultModelBlock, investigatorOptions, modelSetFromConfig } from '../runtime/build-investigator.js';
import { BUNDLED_CATALOG, loadSnapshot } from '../runtime/open-catalog.js';
import { loadCliConfig } from './cli-config.js';
import type { CliCommand } from '../runtime/cli-io.js';
import { recallOptions } from '../runtime/recall-options.js';

const USAGE = 'reprise eval investigate [--scenarios DIR] [--runs N] [--k K] [--pass SCORE] [--memory] [--json] [--catalog DIR] [--config FILE]';
export const SCENARIOS_DIR = fileURLToPath(new URL('../../eval/investigate', import.meta.url));

export interface Scenario {
  id: string;
  description: string;
  /** One Alertmanager alert. */
  alert: Record<string, unknown>;
  /** Scripted tools of a read server named `k8s`: tool → description and recorded result. */
  tools: Record<string, { description: string; result: unknown }>;
  /** Extra catalog entries (path → markdown), e.g. the poisoned one. */
  catalogEntries?: Record<string, string>;
  /** Start from this recalled entry (confirm → verify → deliver or fall through). */
  recall?: string;
  confirm?: string[];
  expect: ScenarioExpectation;
  /** The scripted model used when no model is configured. */
  fake: Script;
}

export async function loadScenarios(dir: string): Promise<Scenario[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(files.map(async (f) => JSON.parse(await readFile(join(dir, f), 'utf8')) as Scenario));
}

/** The scenario's recorded tool results as a read server named `k8s`. */
export function scenarioTools(s: Scenario): ToolProvider {
  return {
    server: 'k8s',
    access: 'read',
    listTools: async () =>
      Object.entries(s.tools).map(([name, t]) => ({
        name,
        description: t.description,
        inputSchema: { type: 'object', properties: { namespace: { type: 'string' }, pod: { type: 'string' } }, required: ['namespace'] },
        readOnlyHint: true,
      })),
    callTool: async (name) => {
      const t = s.tools[name];
      return t
        ? { text: typeof t.result === 'string' ? t.result : JSON.stringify(t.result, null, 1), isError: false }
        : { text: `no recorded result for ${name}`, isError: true };
    },
    close: async () => {},
  };
}

export function scenarioIncident(s: Scenario): Incident {
  return parseAlertmanagerPayload({ version: '4', status: 'firing', alerts: [s.alert] }).incidents[0]!;
}

function withEntries(base: CatalogSnapshot, extra: Record<string, string> | undefined): CatalogSnapshot {
  if (!extra || Object.keys(extra).length === 0) return base;
  const added = Object.entries(extra).flatMap(([path, text]) => {
    const e = parseEntry(path, text).entry;
    return e ? [e] : [];
  });
  const entries = [...base.entries.filter((e) => !extra[e.id]), ...added];
  return buildCatalogSnapshot(entries, new PostingsIndex(entries));
}

function engineFor(s: Scenario, config: Config, models: ModelSet, catalog: CatalogSnapshot): Investigator {
  const base = investigatorOptions(config.model ? config : { ...config, model: defaultModelBlock() });
  return new Investigator({
    models,
    tools: [scenarioTools(s)],
    catalog: () => catalog,
    findings: new InMemoryFindingStore(),
    meter: new InMemoryTokenMeter(),
    clock: systemClock,
    logger: silentLogger,
    options: {
      ...base,
      tools: { ...base.tools, allow: [...BUILTIN_TOOL_NAMES, ...Object.keys(s.tools).map((t) => `k8s__${t}`)], scope: [], confirm: s.confirm ?? [] },
    },
  });
}

const fakeModels = (s: Scenario): ModelSet => {
  const m = scriptedModel('scripted-fake', s.fake);
  return { main: m, verify: m, rerank: m };
};

export const evalInvestigate: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    {
      scenarios: { type: 'string', description: 'directory of recorded investigation scenarios', valueName: 'DIR' },
      runs: { type: 'string', description: 'runs per scenario', valueName: 'N' },
      k: { type: 'string', description: 'a scenario passes when at least K of its runs pass (default: two thirds)', valueName: 'K' },
      pass: { type: 'string', description: 'score a run needs to pass (default 0.5)', valueName: 'SCORE' },
      memory: { type: 'boolean', description: 'compare with recall from memory' },
      json: { type: 'boolean', description: 'print JSON instead of text' },
      catalog: { type: 'string', description: 'catalog directory (default: the configured or bundled catalog)', valueName: 'DIR' },
      config: { type: 'string', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const { values } = parsed;
  const loaded = loadCliConfig(values.config, io, { oneShot: true });
  if ('exit' in loaded) return loaded.exit;
  const { config } = loaded;
  const live = config.model !== undefined;
  const runs = Number(values.runs ?? (live ? 3 : 1));
  const k = Number(values.k ?? Math.ceil((2 * runs) / 3));
  const passScore = Number(values.pass ?? 0.5);
  if (![runs, k, passScore].every(Number.isFinite) || runs < 1 || k < 1 || k > runs) {
    io.stderr(`reprise eval investigate: --runs N ≥ 1, 1 ≤ --k ≤ N, --pass a number\nusage: ${USAGE}\n`);
    return 2;
  }
  io.stderr(
    live
      ? `eval: against ${config.model!.model} at ${config.model!.base_url}, ${runs} runs per scenario, pass ${k} of ${runs}\n`
      : "eval: no model configured — running each scenario's scripted fake model (checks the harness and the engine, not a model)\n",
  );
  const scenarios = await loadScenarios(resolve(io.cwd, values.scenarios ?? SCENARIOS_DIR));
  const { snapshot: base } = await loadSnapshot(values.catalog ? resolve(io.cwd, values.catalog) : BUNDLED_CATALOG);
  const liveModels = live ? modelSetFromConfig(config.model!) : undefined;

  if (values.memory) return memoryMode(scenarios, base, config, liveModels, io, values.json === true);

  const report = [];
  for (const s of scenarios) {
    const catalog = withEntries(base, s.catalogEntries);
    const scores: Array<RunScore & { status: string; calls: number; tokens: number }> = [];
    for (let n = 0; n < runs; n++) {
      const inv = engineFor(s, config, liveModels ?? fakeModels(s), catalog);
      const incident = scenarioIncident(s);
      const entry = s.recall ? catalog.byId.get(s.recall) : undefined;
      const r = await inv.run({ incident, ...(entry ? { recall: { entry, confidence: 0.85 } } : {}) }, () => {});
      scores.push({ ...scoreRun(r, s.expect, passScore), status: r.status, calls: r.usage.calls, tokens: r.usage.input + r.usage.output });
    }
    const passed = kOfN(scores, k);
    report.push({
      id: s.id,
      passed,
      runs: scores.length,
      passes: scores.filter((x) => x.passed).length,
      meanScore: scores.reduce((a, x) => a + x.score, 0) / scores.length,
      scores,
    });
    io.stderr(`eval: ${s.id} ${passed ? 'PASS' : 'FAIL'} (${scores.filter((x) => x.passed).length}/${runs})\n`);
  }
  const all = report.every((r) => r.passed);
  if (values.json) {
    io.stdout(`${JSON.stringify({ model: live ? config.model!.model : 'scripted-fake', runs, k, passScore, passed: all, scenarios: report }, null, 2)}\n`);
  } else {
    io.stdout(
      `model: ${live ? config.model!.model : 'scripted fake (no model configured)'} · ${runs} runs, pass ${k} of ${runs}, run passes at score ≥ ${passScore}\n`,
    );
    for (const r of report) {
      io.stdout(`${r.passed ? '✓' : '✗'} ${r.id}: ${r.passes}/${r.runs} runs pass, mean score ${r.meanScore.toFixed(2)}\n`);
      for (const x of r.scores)
        io.stdout(
          `    ${x.passed ? 'pass' : 'fail'} score ${x.score.toFixed(2)} precision ${x.precision.toFixed(2)} · ${x.status} · ${x.calls} calls, ${x.tokens} tokens · ${x.why}\n`,
        );
    }
    io.stdout(`${all ? 'all scenarios pass' : 'some scenarios fail'}\n`);
  }
  return all ? 0 : 1;
};

/** Memory off: always investigate. Memory on: recall's gates first, then confirm + verify, else investigate. */
async function memoryMode(
  scenarios: readonly Scenario[],
  base: CatalogSnapshot,
  config: Config,
  liveModels: ModelSet | undefined,
  io: Parameters<CliCommand>[1],
  json: boolean,
): Promise<number> {
  const empty = LedgerReader.empty();
  const opts = { ...recallOptions(config), liveStateTools: true };
  const answer = async (i: number, memory: boolean): Promise<MemoryAnswer> => {
    const s = scenarios[i]!;
    const catalog = withEntries(base, s.catalogEntries);
    const inv = engineFor(
      {
        ...s,
        confirm:
          s.confirm ??
          Object.keys(s.tools)
            .slice(0, 2)
            .map((t) => `k8s__${t}`),
      },
      config,
      liveModels ?? fakeModels(s),
      catalog,
    );
    const incident = scenarioIncident(s);
    const t0 = performance.now();
    const hit = memory ? recall(incident, catalog, (e, k) => empty.trackRecord(e, k), opts, new Date()).instant : null;
    const r: InvestigationResult = await inv.run({ incident, ...(hit ? { recall: { entry: hit.entry, confidence: hit.confidence } } : {}) }, () => {});
    return {
      path: r.kind === 'recall' && r.recall?.delivered ? 'recall' : r.finding ? 'investigation' : 'none',
      modelCalls: r.usage.calls,
      tokens: r.usage.input + r.usage.output,
      firstAnswerMs: performance.now() - t0,
      correct: scoreRun(r, { ...s.expect, recallWithdrawn: false }, 0.5).passed,
    };
  };
  const result = await compareMemory(scenarios.length, answer);
  io.stdout(json ? `${JSON.stringify(result, null, 2)}\n` : `${renderMemoryTable(result)}\n`);
  return 0;
}

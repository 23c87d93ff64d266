/**
 * Builds the real investigation engine against the OpenAI-compatible fake and the fake MCP
 * server (over HTTP or stdio), from YAML config the way the CLI does.
 */
import { join } from 'node:path';
import { parseAlertmanagerPayload } from '../../../src/core/alertmanager.js';
import type { Investigator } from '../../../src/core/investigate/investigator.js';
import { INVESTIGATE_SYSTEM, RERANK_SYSTEM, VERIFY_SYSTEM } from '../../../src/core/investigate/prompts.js';
import type { Step } from '../../../src/core/investigate/step.js';
import type { CatalogSnapshot } from '../../../src/core/recall/catalog-snapshot.js';
import { buildQuery } from '../../../src/core/recall/build-query.js';
import { alertNameContext, structuralGate } from '../../../src/core/recall/structural.js';
import type { Candidate, Incident } from '../../../src/core/types.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import type { Config } from '../../../src/config/schema.js';
import { buildInvestigator, type BuiltInvestigator } from '../../../src/runtime/build-investigator.js';
import { loadSnapshot } from '../../../src/runtime/open-catalog.js';
import { type InMemoryTokenMeter } from '../../../src/core/investigate/memory-stores.js';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startOpenAIFake, type FakeReply, type OpenAIFake, type RecordedRequest, type Responder } from '../../fakes/openai-fake.js';
import { startK8sHttpServer, type K8sFixtures } from '../../fakes/mcp-k8s-server.js';
import { crashLoopPayload } from './alerts.js';
import { REPO_ROOT } from './spawn-bot.js';

export const K8S_FIXTURES = join(REPO_ROOT, 'test/fakes/fixtures/k8s-state.json');
export const MCP_SERVER_TS = join(REPO_ROOT, 'test/fakes/mcp-k8s-server.ts');
export const INVESTIGATE_CATALOG = join(REPO_ROOT, 'test/fixtures/catalog-investigate');
export const OOM_ENTRY = 'incidents/checkout-api-oomkilled.md';
export const POISONED_ENTRY = 'incidents/checkout-api-tls-expired.md';

/** The file's OpenAI fake and k8s MCP server (HTTP), live once `useModelAndTools` has run its hooks. */
export let fake: OpenAIFake;
export let mcp: Awaited<ReturnType<typeof startK8sHttpServer>>;

/**
 * Starts an OpenAI fake and the k8s MCP server over fixture data for the calling test file,
 * stops them after it, and clears what they recorded after each test.
 */
export function useModelAndTools(opts: { slowMs?: number } = {}): void {
  beforeAll(async () => {
    fake = await startOpenAIFake();
    const fixtures = JSON.parse(readFileSync(K8S_FIXTURES, 'utf8')) as K8sFixtures;
    mcp = await startK8sHttpServer(fixtures, opts.slowMs === undefined ? undefined : { slowMs: opts.slowMs });
  });
  afterAll(async () => {
    await fake?.close();
    await mcp?.close();
  });
  afterEach(() => {
    if (fake) fake.requests.length = 0;
    if (mcp) mcp.received.length = 0;
  });
}

export type Role = 'rerank' | 'verify' | 'investigate' | 'other';

/** Which engine prompt a request carries, read from its system message. */
export function roleOf(req: RecordedRequest): Role {
  const sys = req.body.messages.find((m) => m.role === 'system')?.content;
  if (sys === RERANK_SYSTEM) return 'rerank';
  if (sys === VERIFY_SYSTEM) return 'verify';
  if (sys === INVESTIGATE_SYSTEM) return 'investigate';
  return 'other';
}

/** Answers each role from its own queue; an unexpected call gets HTTP 418 so the test sees it. */
export function byRole(script: Partial<Record<Role, Array<FakeReply | ((req: RecordedRequest) => FakeReply)>>>): Responder {
  return (req) => {
    const next = script[roleOf(req)]?.shift();
    if (next === undefined) return { status: 418 };
    return typeof next === 'function' ? next(req) : next;
  };
}

export const OOM_FINDING = {
  summary: 'checkout-api is OOMKilled: the -Xmx960m heap leaves no room inside the 1Gi limit',
  verdict: 'action_required',
  confidence: 0.85,
  rootCauses: [
    {
      cause: 'JAVA_TOOL_OPTIONS=-Xmx960m inside a 1Gi memory limit: the kernel OOM-kills the JVM',
      confidence: 0.85,
      evidence: ['lastState.terminated.reason OOMKilled, exit 137', 'rollout of JAVA_TOOL_OPTIONS=-Xmx960m'],
      entities: ['checkout-api', 'JAVA_TOOL_OPTIONS'],
    },
  ],
  suggestedActions: [{ action: 'kubectl -n payments rollout undo deploy/checkout-api', reversible: true }],
  ruledOut: [{ cause: 'expired TLS certificate', reason: 'the pods are OOMKilled, not failing a handshake' }],
  openQuestions: [],
  dataGaps: [],
};

export const finding = (over: Record<string, unknown> = {}): FakeReply => ({ content: JSON.stringify({ ...OOM_FINDING, ...over }) });
export const toolCall = (name: string, args: Record<string, unknown> | string): FakeReply => ({ toolCalls: [{ name, arguments: args }] });
export const verdict = (v: 'supported' | 'weakened' | 'rejected', confidence: number, reasons: string[] = []): FakeReply => ({
  content: JSON.stringify({ verdict: v, confidence, reasons }),
});

export function crashLoopIncident(description?: string): Incident {
  const payload = crashLoopPayload({ status: 'firing' }) as { alerts: Array<{ annotations: Record<string, string> }> };
  if (description !== undefined) payload.alerts[0]!.annotations['description'] = description;
  return parseAlertmanagerPayload(payload).incidents[0]!;
}

/** Structurally agreeing candidates, best BM25 first: what recall hands the rerank gate. */
export function agreeingCandidates(incident: Incident, snapshot: CatalogSnapshot): Candidate[] {
  const names = alertNameContext(incident.alertname, snapshot.knownAlerts);
  const q = buildQuery(incident);
  return snapshot.index.search(q.tokens, 20, q.weights).filter((c) => {
    const v = structuralGate(c.entry, incident, names);
    return v.passed && (v.tier === 'exact' || v.tier === 'namespace');
  });
}

export interface EngineOptions {
  modelBaseUrl: string;
  /** MCP server: over HTTP at this URL, or over stdio (spawned). */
  mcp: { http: string } | 'stdio';
  /** Extra YAML under `model:` and `tools:` (indented by the caller). */
  model?: string[];
  tools?: string[];
  /** More entries under `tools.servers`. */
  servers?: string[];
  callTimeout?: string;
  /** `tools.confirm` (default: pod status and events). */
  confirm?: string;
  meter?: InMemoryTokenMeter;
}

export interface Engine extends BuiltInvestigator {
  config: Config;
  snapshot: CatalogSnapshot;
  investigator: Investigator;
  /** Steps the sink received, in order. */
  sunk: Step[];
}

export async function startEngine(o: EngineOptions): Promise<Engine> {
  const server =
    o.mcp === 'stdio'
      ? [
          '    - name: k8s',
          '      access: read',
          '      transport: stdio',
          `      command: ${process.execPath}`,
          `      args: [${JSON.stringify(MCP_SERVER_TS)}, ${JSON.stringify(K8S_FIXTURES)}]`,
          '      env: { FAKE_SLOW_MS: "5000" }',
        ]
      : ['    - name: k8s', '      access: read', '      transport: http', `      url: ${o.mcp.http}`];
  const yaml = [
    'model:',
    `  base_url: ${o.modelBaseUrl}`,
    '  model: main-model',
    '  max_retries: 0',
    '  request_timeout: 5s',
    ...(o.model ?? []),
    'tools:',
    '  servers:',
    ...server,
    ...(o.servers ?? []),
    `  confirm: ${o.confirm ?? '[k8s__pod_status, k8s__events]'}`,
    `  call_timeout: ${o.callTimeout ?? '5s'}`,
    '  connect_timeout: 20s',
    ...(o.tools ?? ['  allow: [k8s__pod_status, k8s__events, k8s__logs, kb_search, kb_get, prior_findings, recurrence]']),
    '',
  ].join('\n');
  const config = parseConfigText(yaml, { env: {}, cwd: REPO_ROOT, oneShot: true });
  const { snapshot } = await loadSnapshot(INVESTIGATE_CATALOG);
  const built = await buildInvestigator(config, { catalog: () => snapshot, cwd: REPO_ROOT, ...(o.meter ? { meter: o.meter } : {}) });
  if (built.problems.length) throw new Error(built.problems.join('; '));
  const sunk: Step[] = [];
  return Object.assign(built, { config, snapshot, sunk });
}

/** A sink that keeps Steps on the engine (what the bot's outbox would get). */
export const sinkOf =
  (e: Engine) =>
  (s: Step): void =>
    void e.sunk.push(s);

/**
 * The YAML of a `reprise serve` on the file's model fake and k8s MCP server: bearer token,
 * the model, its read tools and confirm. `before` goes first (e.g. `ledger:`), `catalog` and
 * `trigger` are the blocks' lines, `model` extra lines of the model block, `after` trailing blocks.
 */
export function serveModelConfig(
  o: { catalog?: string[]; trigger?: string[]; model?: string[]; requestTimeout?: string; before?: string[]; after?: string[] } = {},
): string {
  return [
    ...(o.before ?? []),
    'server:',
    '  bearer_token: test-token-for-investigations',
    'catalog:',
    ...(o.catalog ?? [`  dir: ${JSON.stringify(INVESTIGATE_CATALOG)}`]),
    ...(o.trigger ? ['trigger:', ...o.trigger] : []),
    'model:',
    `  base_url: ${fake.baseUrl}`,
    '  model: main-model',
    '  max_retries: 0',
    `  request_timeout: ${o.requestTimeout ?? '5s'}`,
    ...(o.model ?? []),
    'tools:',
    '  servers:',
    '    - name: k8s',
    '      access: read',
    '      transport: http',
    `      url: ${mcp.url}`,
    '  confirm: [k8s__pod_status, k8s__events]',
    '  allow: [k8s__pod_status, k8s__events, k8s__logs, kb_search, kb_get, prior_findings, recurrence]',
    ...(o.after ?? []),
    '',
  ].join('\n');
}

/**
 * manifests/observability (issue 7 item 3): the PrometheusRule and the Grafana dashboard parse,
 * carry what Prometheus, Grafana and on-call need, every PromQL expression is valid (the
 * Prometheus UI's own grammar), and every `reprise_*` series they use is in the `/metrics` of a
 * real `serve` — one with a git catalog and a model with a daily budget, so every optional
 * family is registered. A renamed series fails here before a dashboard goes blank.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parser as promql } from '@prometheus-io/lezer-promql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { startBot, type RunningBot } from '../../../src/runtime/start-bot.js';
import type { CliIO } from '../../../src/runtime/cli-io.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import { silentLogger } from '../../../src/ports/logger.js';
import { makeGitRemote, incidentEntry, type GitRemote } from '../../helpers/git-remote.js';
import { parseExposition, scrape, type Exposition } from '../../helpers/prom-text.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const DIR = resolve(ROOT, 'manifests/observability');

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface PrometheusRule {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: { groups: Array<{ name: string; rules: Rule[] }> };
}
interface Target {
  refId: string;
  expr: string;
  datasource?: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: Target[];
  gridPos: { h: number; w: number; x: number; y: number };
}
interface Dashboard {
  title: string;
  uid: string;
  schemaVersion: number;
  templating: { list: Array<{ name: string; type: string; query: unknown }> };
  panels: Panel[];
}

const rule = parse(readFileSync(join(DIR, 'prometheusrule.yaml'), 'utf8')) as PrometheusRule;
const dashboard = JSON.parse(readFileSync(join(DIR, 'grafana-dashboard.json'), 'utf8')) as Dashboard;
const kustomization = parse(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8')) as {
  resources: string[];
  configMapGenerator: Array<{ name: string; files: string[]; options?: { labels?: Record<string, string> } }>;
};
const docs = readFileSync(resolve(ROOT, 'docs/observability.md'), 'utf8');

const alerts = rule.spec.groups.flatMap((g) => g.rules);
const queryPanels = dashboard.panels.filter((p) => p.type !== 'row');
const targets = queryPanels.flatMap((p) => p.targets ?? []);

/** Grafana's variables as Grafana substitutes them before the query reaches Prometheus. */
function grafanaToPromql(expr: string): string {
  return expr.replaceAll('$__rate_interval', '5m').replaceAll('$__interval', '1m').replaceAll('$namespace', '.*');
}

/** The syntax errors of a PromQL expression (empty = valid), with where they start. */
export function promqlErrors(expr: string): string[] {
  const errors: string[] = [];
  promql.parse(expr).iterate({
    enter: (n) => {
      if (n.type.isError) errors.push(`syntax error at ${n.from}: …${expr.slice(n.from, n.from + 20)}`);
    },
  });
  return errors;
}

/** Every `reprise_*` metric name an expression reads. */
export function reprisesIn(expr: string): string[] {
  return [...new Set(expr.match(/\breprise_[a-zA-Z0-9_:]+/g) ?? [])];
}

describe('the PromQL checks themselves', () => {
  it('tell a broken expression from a valid one and find the names', () => {
    expect(promqlErrors('sum by (le) (rate(reprise_x_bucket[5m]))')).toEqual([]);
    expect(promqlErrors('sum(rate(reprise_x[5m])')).not.toEqual([]);
    expect(promqlErrors('rate(reprise_x[$__rate_interval])')).not.toEqual([]);
    expect(promqlErrors(grafanaToPromql('rate(reprise_x{namespace=~"$namespace"}[$__rate_interval])'))).toEqual([]);
    expect(reprisesIn('reprise_a_total / on(pod) reprise_b{x="reprise_not_a_name"}').sort()).toEqual(['reprise_a_total', 'reprise_b', 'reprise_not_a_name']);
    const m = parseExposition('# TYPE reprise_h histogram\nreprise_h_bucket{le="+Inf"} 2\nreprise_h_count 2\nreprise_c_total{a="x"} 3\n');
    expect(m.has('reprise_h_sum')).toBe(true);
    expect(m.has('reprise_c_total')).toBe(true);
    expect(m.has('reprise_c')).toBe(false);
    expect(m.value('reprise_c_total', { a: 'x' })).toBe(3);
    expect(m.value('reprise_c_total', { a: 'y' })).toBeUndefined();
  });
});

describe('the PrometheusRule', () => {
  it('is a monitoring.coreos.com/v1 PrometheusRule with named groups', () => {
    expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(rule.kind).toBe('PrometheusRule');
    expect(rule.metadata.name).toBe('reprise');
    expect(rule.spec.groups.length).toBeGreaterThan(0);
    const names = rule.spec.groups.map((g) => g.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('alerts on what the issue asks for: outbox backing up, sync failing, catalog stale, no leader, budget exhausted, down, not ready', () => {
    const byName = new Map(alerts.map((a) => [a.alert, a]));
    for (const name of ['RepriseOutboxBackingUp', 'RepriseCatalogSyncFailing', 'RepriseCatalogStale', 'RepriseNoLeader', 'RepriseModelBudgetExhausted', 'RepriseDown', 'RepriseNotReady']) {
      expect(byName.has(name), name).toBe(true);
    }
    expect(byName.get('RepriseNoLeader')!.expr).toMatch(/sum\(reprise_leader\) == 0/);
    expect(byName.get('RepriseNoLeader')!.expr).toMatch(/absent\(reprise_leader\)/);
    expect(byName.get('RepriseModelBudgetExhausted')!.expr).toContain('reprise_model_daily_budget_exhausted');
    expect(byName.get('RepriseOutboxBackingUp')!.expr).toContain('reprise_outbox_');
  });

  it('gives every alert a unique name, a valid expression, a severity, a summary, a description and a runbook section that exists', () => {
    const names = alerts.map((a) => a.alert);
    expect(new Set(names).size).toBe(names.length);
    const problems: string[] = [];
    for (const a of alerts) {
      const at = a.alert ?? a.record ?? '?';
      if (!a.alert) problems.push(`${at}: not an alert`);
      problems.push(...promqlErrors(a.expr).map((e) => `${at}: ${e}`));
      if (!['critical', 'warning', 'info'].includes(a.labels?.['severity'] ?? '')) problems.push(`${at}: severity`);
      if (a.for !== undefined && !/^\d+[smh]$/.test(a.for)) problems.push(`${at}: for ${a.for}`);
      for (const k of ['summary', 'description', 'runbook']) if (!a.annotations?.[k]?.trim()) problems.push(`${at}: no ${k}`);
      const anchor = /docs\/observability\.md#([a-z0-9-]+)/.exec(a.annotations?.['runbook'] ?? '')?.[1];
      if (anchor !== a.alert?.toLowerCase()) problems.push(`${at}: runbook should point at docs/observability.md#${a.alert?.toLowerCase()}`);
      if (!new RegExp(`^#{2,4} ${a.alert}\\b`, 'm').test(docs)) problems.push(`${at}: no section in docs/observability.md`);
    }
    expect(problems).toEqual([]);
  });
});

describe('the Grafana dashboard', () => {
  it('takes its data source from a template variable, on every panel and every query', () => {
    const ds = dashboard.templating.list.find((v) => v.type === 'datasource');
    expect(ds).toMatchObject({ name: 'datasource', query: 'prometheus' });
    const bad = [...queryPanels.map((p) => ({ what: p.title, uid: p.datasource?.uid })), ...targets.map((t) => ({ what: `${t.refId} ${t.expr}`, uid: t.datasource?.uid }))].filter((x) => x.uid !== '${datasource}');
    expect(bad).toEqual([]);
  });

  it('has a title, a stable uid, unique panel ids, and valid PromQL in every target', () => {
    expect(dashboard.title).toBe('Reprise');
    expect(dashboard.uid).toMatch(/^[a-z0-9-]{1,40}$/);
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(targets.length).toBeGreaterThan(20);
    const problems: string[] = [];
    for (const p of queryPanels) {
      if (!p.targets?.length) problems.push(`${p.title}: no targets`);
      if (p.gridPos.x + p.gridPos.w > 24) problems.push(`${p.title}: wider than the grid`);
      const refs = (p.targets ?? []).map((t) => t.refId);
      if (new Set(refs).size !== refs.length) problems.push(`${p.title}: duplicate refId`);
      for (const t of p.targets ?? []) problems.push(...promqlErrors(grafanaToPromql(t.expr)).map((e) => `${p.title} ${t.refId}: ${e}`));
    }
    expect(problems).toEqual([]);
  });

  it('has a panel for each series the issue names', () => {
    const used = new Set(targets.flatMap((t) => reprisesIn(t.expr)));
    for (const name of [
      'reprise_recall_decisions_total',
      'reprise_recall_stopped_total',
      'reprise_investigations_total',
      'reprise_model_calls_total',
      'reprise_model_tokens_total',
      'reprise_chat_deliveries_total',
      'reprise_chat_delivery_retries_total',
      'reprise_chat_delivery_failures_total',
      'reprise_outbox_pending',
      'reprise_ledger_appended_total',
      'reprise_webhook_duration_seconds_bucket',
      'reprise_leader',
      'reprise_catalog_head_age_seconds',
      'reprise_catalog_sync_failures_total',
      'reprise_model_daily_tokens_remaining',
    ]) {
      expect(used.has(name), name).toBe(true);
    }
  });
});

describe('the kustomization', () => {
  it('lists the rule and generates the dashboard ConfigMap with the Grafana sidecar label', () => {
    expect(kustomization.resources).toContain('prometheusrule.yaml');
    const gen = kustomization.configMapGenerator.find((g) => g.files.includes('grafana-dashboard.json'));
    expect(gen).toBeDefined();
    expect(gen!.options?.labels?.['grafana_dashboard']).toBe('1');
  });
});

/** kubectl, when this machine has it (its kustomize renders offline). */
const kubectl = ((): string | undefined => {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return 'kubectl';
  } catch {
    return undefined;
  }
})();

describe('kubectl kustomize manifests/observability', () => {
  it.skipIf(!kubectl)('renders the rule and a dashboard ConfigMap the Grafana sidecar picks up, holding the dashboard as is', () => {
    const out = execFileSync(kubectl!, ['kustomize', DIR], { encoding: 'utf8' });
    const objects = parseAllDocuments(out).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; data?: Record<string, string> });
    expect(objects.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'PrometheusRule']);
    const cm = objects.find((o) => o.kind === 'ConfigMap')!;
    expect(cm.metadata.labels?.['grafana_dashboard']).toBe('1');
    expect(JSON.parse(cm.data!['grafana-dashboard.json']!)).toEqual(dashboard);
    for (const o of objects) expect(o.metadata.namespace).toBe('monitoring');
  });
});

describe('every series the rule and the dashboard read is exposed by a real serve', () => {
  let dir: string;
  let remote: GitRemote;
  let bot: RunningBot;
  let exposition: Exposition;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reprise-obs-'));
    remote = makeGitRemote({ 'incidents/checkout.md': incidentEntry({ title: 'checkout-api crashlooping', resource: 'k8s://prod-eu-1/payments/deployment/checkout-api', alert: 'KubePodCrashLooping' }) });
    const config = parseConfigText(
      [
        'server: { port: 0, host: 127.0.0.1, bearer_token: scrape-test-token }',
        `store: { data_dir: ${JSON.stringify(dir)} }`,
        `catalog: { git: { url: ${JSON.stringify(remote.bare)}, poll_interval: 1h } }`,
        // Never called: nothing is sent to the bot. Its series are registered all the same.
        'model: { base_url: "http://127.0.0.1:9/v1", model: scrape-test, daily_token_budget: 1000 }',
        'transport: { console: "on" }',
      ].join('\n'),
      { env: {}, cwd: dir },
    );
    const io: CliIO = { stdout: () => {}, stderr: () => {}, stdin: async () => '', env: {}, cwd: dir };
    bot = await startBot(config, io, silentLogger);
    exposition = await scrape(`http://127.0.0.1:${bot.port}`);
  }, 30_000);

  afterAll(async () => {
    await bot?.stop();
    remote?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('finds each name in the exposition', () => {
    const used = new Map<string, string[]>();
    for (const a of alerts) for (const n of reprisesIn(a.expr)) used.set(n, [...(used.get(n) ?? []), `rule ${a.alert}`]);
    for (const p of queryPanels) for (const t of p.targets ?? []) for (const n of reprisesIn(t.expr)) used.set(n, [...(used.get(n) ?? []), `panel ${p.title}`]);
    expect(used.size).toBeGreaterThan(25);
    const missing = [...used].filter(([n]) => !exposition.has(n)).map(([n, where]) => `${n} (${where.join(', ')})`);
    expect(missing).toEqual([]);
  });

  it('starts the bounded series at 0 and labels nothing with free text', () => {
    expect(exposition.value('reprise_recall_decisions_total', { answer: 'incident' })).toBe(0);
    expect(exposition.value('reprise_webhook_duration_seconds_count', { source: 'generic' })).toBe(0);
    expect(exposition.value('reprise_chat_deliveries_total', { surface: 'console', op: 'post' })).toBe(0);
    expect(exposition.value('reprise_model_daily_token_budget')).toBe(1000);
    expect(exposition.value('reprise_model_daily_tokens_remaining')).toBe(1000);
    expect(exposition.value('reprise_leader')).toBe(1);
    // The label names the loop's series use: each from a closed set (see src/http/loop-metrics.ts).
    const ours = exposition.samples.filter((s) => s.name.startsWith('reprise_') && !s.name.startsWith('reprise_catalog_info'));
    const labelNames = new Set(ours.flatMap((s) => Object.keys(s.labels)));
    const closed = ['answer', 'gate', 'status', 'reason', 'surface', 'op', 'type', 'role', 'purpose', 'outcome', 'source', 'route', 'method', 'mode', 'le'];
    expect([...labelNames].filter((l) => !closed.includes(l))).toEqual([]);
    expect(labelNames.has('surface')).toBe(true);
  });
});

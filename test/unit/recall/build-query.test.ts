import { describe, expect, it } from 'vitest';
import { buildQuery, NEUTRAL_QUERY_WEIGHTS, runbookUrlTail, type QueryWeights } from '../../../src/core/recall/build-query.js';
import { manyTermExpression } from '../../../bench/hostile-inputs.js';
import { alert } from './recall-fixtures.js';

const W = (over: Partial<QueryWeights> = {}): QueryWeights => ({ ...NEUTRAL_QUERY_WEIGHTS, ...over });
const expr = (promql: string): string => `http://prometheus-k8s.monitoring:9090/graph?g0.expr=${encodeURIComponent(promql)}&g0.tab=1`;

const hpa = alert({
  alertname: 'Alert754f89',
  labels: { namespace: 'payments', horizontalpodautoscaler: 'ledger-sync', job: 'kube-state-metrics' },
  annotations: {
    summary: 'HPA is running at max replicas',
    description: 'HPA payments/ledger-sync has been running at max replicas for longer than 15 minutes.',
  },
  generatorURL: expr(
    'kube_horizontalpodautoscaler_status_current_replicas{job="kube-state-metrics", reason!="Ignored"} == kube_horizontalpodautoscaler_spec_max_replicas',
  ),
});

describe('buildQuery', () => {
  it('weights each part of the alert, a term taking its largest weight', () => {
    const { weights } = buildQuery(hpa, W({ summary: 3, description: 0.5, labelNames: 2, exprMetrics: 1.5, exprLabels: 0.25 }));
    expect(weights.get('max')).toBe(3); // summary and description: the summary wins
    expect(weights.get('longer')).toBe(0.5); // description only
    expect(weights.get('horizontalpodautoscaler')).toBe(2); // label name (and expression metric at 1.5)
    expect(weights.get('spec')).toBe(1.5); // expression metric only
    expect(weights.get('kube')).toBe(1.5); // job value (1) and expression metric (1.5)
    expect(weights.get('ignored')).toBeUndefined(); // negative matcher value
    expect(weights.get('alert754f89')).toBe(1); // alertname
  });

  it('reads the expression only when its weight is above 0', () => {
    expect(buildQuery(hpa, W()).tokens).not.toContain('spec');
    expect(buildQuery(hpa, W({ exprMetrics: 1 })).tokens).toContain('spec');
  });

  it('drops a part weighted 0 and never keeps bare numbers', () => {
    const { tokens } = buildQuery(hpa, W({ description: 0, labelNames: 0 }));
    expect(tokens).not.toContain('longer');
    expect(tokens).not.toContain('job'); // the label's name; its value stays
    expect(tokens).toContain('kube');
    expect(tokens.some((t) => /^\d+$/.test(t))).toBe(false);
  });

  it('reads a lone description as the statement of the condition (summary weight)', () => {
    const bare = alert({ alertname: 'X1', annotations: { description: 'Disk is almost full.' } });
    expect(buildQuery(bare, W({ summary: 4, description: 0 })).weights.get('disk')).toBe(4);
  });

  it('takes the alert name from runbook_url, never the host or folders', () => {
    const i = alert({
      alertname: 'Alertfc7494',
      annotations: { runbook_url: 'https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping/' },
    });
    const { tokens } = buildQuery(i, W({ runbookUrl: 2 }));
    expect(tokens).toContain('kubepodcrashloop');
    expect(tokens).not.toContain('runbook');
    expect(tokens).not.toContain('prometheus');
  });
});

describe('runbookUrlTail', () => {
  it.each([
    ['https://runbooks.example.dev/kubernetes/kubepodcrashlooping/', 'kubepodcrashlooping'],
    ['https://github.com/org/runbooks/blob/main/KubePodCrashLooping.md', 'KubePodCrashLooping'],
    ['https://wiki.example/runbooks.html#Kube%20Pod%20Crash', 'runbooks Kube Pod Crash'],
    ['https://example.com', ''],
    ['not a url %zz', 'not a url %zz'],
  ])('%s', (url, tail) => {
    expect(runbookUrlTail(url)).toBe(tail);
  });
});

describe('hostile generatorURL', () => {
  // How the work grows with the expression is measured by the benchmark (REPRISE_BENCH_ONLY=growth).
  it('builds a bounded query from a 1 MiB expression', () => {
    const withExpr = (terms: number) =>
      alert({ alertname: 'Alert1', annotations: { summary: 'x' }, generatorURL: `http://p/graph?g0.expr=${encodeURIComponent(manyTermExpression(terms))}` });
    const weights = W({ exprMetrics: 1, exprLabels: 1, exprMaxTerms: 200 });
    const i = withExpr(60_000);
    expect(i.generatorUrl!.length).toBeGreaterThan(1024 * 1024);
    const { tokens } = buildQuery(i, weights);
    // 200 pieces at most, each a few tokens.
    expect(tokens.length).toBeLessThan(1000);
    // The first terms of the expression are the ones kept.
    expect(tokens.slice(0, 3)).toEqual(['alert1', 'm0', 'm1']);
  });
});

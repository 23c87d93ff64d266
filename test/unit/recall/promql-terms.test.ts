import { describe, expect, it } from 'vitest';
import { percentDecode } from '../../../src/core/recall/percent-decode.js';
import { expressionFromGeneratorUrl, scanPromql } from '../../../src/core/recall/promql-terms.js';
import { GENERATOR_URLS, PERCENT_GARBAGE, PROMQL_EXPRESSIONS } from '../../../bench/hostile-inputs.js';

const MiB = 1024 * 1024;

describe('expressionFromGeneratorUrl', () => {
  it('takes g0.expr from a Prometheus generatorURL, URL-decoded', () => {
    const url =
      'http://prometheus-k8s.monitoring:9090/graph?g0.expr=max_over_time%28kube_pod_container_status_waiting_reason%7Breason%3D%22CrashLoopBackOff%22%2C+job%3D%22kube-state-metrics%22%7D%5B5m%5D%29+%3E%3D+1&g0.tab=1';
    expect(expressionFromGeneratorUrl(url)).toBe(
      'max_over_time(kube_pod_container_status_waiting_reason{reason="CrashLoopBackOff", job="kube-state-metrics"}[5m]) >= 1',
    );
  });

  it('finds the expression in any position, and a plain `expr` parameter', () => {
    expect(expressionFromGeneratorUrl('http://p/graph?g0.tab=1&g1.expr=up%20%3D%3D%200')).toBe('up == 0');
    expect(expressionFromGeneratorUrl('http://thanos/graph?expr=up#frag')).toBe('up');
  });

  it('is empty without a query or an expression', () => {
    expect(expressionFromGeneratorUrl('http://prometheus-k8s.monitoring:9090/graph')).toBe('');
    expect(expressionFromGeneratorUrl('http://p/graph?g0.tab=1&g0.expr')).toBe('');
    expect(expressionFromGeneratorUrl('')).toBe('');
  });
});

describe('scanPromql', () => {
  it('reads metric names, matcher labels and positive values, not functions, keywords or durations', () => {
    const t = scanPromql(
      'sum by (namespace, horizontalpodautoscaler) (rate(kube_horizontalpodautoscaler_status_current_replicas{job="kube-state-metrics", phase=~"Failed|Pending", reason!="CrashLoopBackOff", key=~"a.*"}[5m] offset 1h)) > 0 and on(cluster) up',
    );
    expect(t.metrics).toEqual(['kube_horizontalpodautoscaler_status_current_replicas', 'up']);
    expect(t.labelNames).toEqual(['namespace', 'horizontalpodautoscaler', 'job', 'phase', 'reason', 'key', 'cluster']);
    // Negative matchers say what the alert is not about; regex syntax is not a word.
    expect(t.labelValues).toEqual(['kube-state-metrics', 'Failed', 'Pending']);
  });

  it('skips comments and reads __name__ matchers as metric names', () => {
    const t = scanPromql('# Without max_over_time, failed scrapes could create false negatives\n{__name__="node_md_disks", state="failed"} > 0');
    expect(t.metrics).toEqual(['node_md_disks']);
    expect(t.labelNames).toEqual(['state']);
    expect(t.labelValues).toEqual(['failed']);
  });

  it('reads recording-rule names with colons and escaped quotes in strings', () => {
    const t = scanPromql('namespace_cpu:kube_pod_container_resource_requests:sum{resource="c\\"pu"}');
    expect(t.metrics).toEqual(['namespace_cpu:kube_pod_container_resource_requests:sum']);
    expect(t.labelValues).toEqual(['c"pu']);
  });

  it('survives unbalanced braces, parentheses and unterminated strings', () => {
    expect(() => scanPromql('}}}))) up{job="x" ((( {{{ "never closed')).not.toThrow();
    expect(scanPromql('}}}))) up{job="x"').metrics).toEqual(['up']);
    expect(scanPromql('rate(foo{job="a"').labelValues).toEqual(['a']);
    expect(scanPromql('bar[5m').metrics).toEqual(['bar']);
  });

  it('stops after maxTerms distinct pieces', () => {
    const many = Array.from({ length: 1000 }, (_, i) => `m${i}`).join(' + ');
    const t = scanPromql(many, 50);
    expect(t.metrics).toHaveLength(50);
  });

  // How the work grows from n to 4n is measured by the benchmark (REPRISE_BENCH_ONLY=growth
  // npm run bench); here each hostile family must give a bounded, correct result at 1 MiB.
  it.each(PROMQL_EXPRESSIONS.map((f) => [f.name, f.make] as const))('reads a 1 MiB hostile expression (%s) into at most maxTerms pieces', (_name, make) => {
    const t = scanPromql(make(MiB));
    expect(t.metrics.length + t.labelNames.length + t.labelValues.length).toBeLessThanOrEqual(200);
    for (const piece of [...t.metrics, ...t.labelNames, ...t.labelValues]) expect(piece.length).toBeGreaterThan(0);
  });
});

describe('percentDecode', () => {
  it('decodes escapes and form-encoded spaces', () => {
    expect(percentDecode('a%20b+c%2Bd')).toBe('a b c+d');
    expect(percentDecode('a+b', false)).toBe('a+b');
    expect(percentDecode('%E2%89%A5 caf%C3%A9')).toBe('≥ café');
  });

  it('keeps malformed escapes as written and replaces broken UTF-8, never throwing', () => {
    expect(percentDecode('100%')).toBe('100%');
    expect(percentDecode('%zz%4')).toBe('%zz%4');
    expect(percentDecode('%E2%89')).toBe('\uFFFD');
    expect(() => decodeURIComponent('%E2%89')).toThrow();
  });

  it.each(PERCENT_GARBAGE.map((f) => [f.name, f.make] as const))('decodes 1 MiB of percent-encoding garbage (%s) without growing it', (_name, make) => {
    expect(typeof percentDecode(make(16))).toBe('string');
    const input = make(MiB);
    const out = percentDecode(input);
    expect(out.length).toBeGreaterThan(0);
    expect(out.length).toBeLessThanOrEqual(input.length);
  });

  it.each(GENERATOR_URLS.map((f) => [f.name, f.make] as const))('reads a 1 MiB generatorURL of garbage (%s) into a bounded scan', (_name, make) => {
    const expr = expressionFromGeneratorUrl(make(MiB));
    expect(expr.length).toBeLessThanOrEqual(MiB);
    const t = scanPromql(expr);
    expect(t.metrics.length + t.labelNames.length + t.labelValues.length).toBeLessThanOrEqual(200);
  });
});

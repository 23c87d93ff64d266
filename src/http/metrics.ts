/**
 * A small Prometheus metrics registry (counters, gauges, histograms with labels) rendering
 * the text exposition format 0.0.4. No dependency: we need a handful of series, not a client.
 */

export type MetricLabels = Readonly<Record<string, string | number>>;

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Default latency buckets in seconds (webhook handling, recall, model calls). */
export const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

function escapeLabelValue(v: string): string {
  return v.replaceAll('\\', '\\\\').replaceAll('\n', '\\n').replaceAll('"', '\\"');
}

function escapeHelp(v: string): string {
  return v.replaceAll('\\', '\\\\').replaceAll('\n', '\\n');
}

function formatValue(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

function renderLabels(pairs: ReadonlyArray<readonly [string, string]>): string {
  if (pairs.length === 0) return '';
  return `{${pairs.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`;
}

abstract class Metric<S> {
  protected readonly series = new Map<string, { values: string[]; state: S }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {
    if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name "${name}"`);
    for (const l of labelNames) {
      if (!LABEL_NAME.test(l) || l === 'le') throw new Error(`invalid label name "${l}" on ${name}`);
    }
  }
  abstract readonly type: 'counter' | 'gauge' | 'histogram';
  protected abstract initial(): S;
  protected abstract renderSeries(pairs: Array<readonly [string, string]>, state: S): string[];

  /** Label values in declared order; unknown label names are a programming error. */
  protected stateFor(labels: MetricLabels = {}): S {
    for (const k of Object.keys(labels)) {
      if (!this.labelNames.includes(k)) throw new Error(`metric ${this.name} has no label "${k}"`);
    }
    const values = this.labelNames.map((l) => String(labels[l] ?? ''));
    const key = JSON.stringify(values);
    let s = this.series.get(key);
    if (!s) {
      s = { values, state: this.initial() };
      this.series.set(key, s);
    }
    return s.state;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`];
    for (const { values, state } of this.series.values()) {
      const pairs = this.labelNames.map((l, i) => [l, values[i] ?? ''] as const);
      lines.push(...this.renderSeries(pairs, state));
    }
    return lines.join('\n') + '\n';
  }
}

/** A monotonically increasing count. Name it `*_total`. */
export class Counter extends Metric<{ v: number }> {
  readonly type = 'counter';
  protected initial(): { v: number } {
    return { v: 0 };
  }
  inc(labels?: MetricLabels, by = 1): void {
    if (!(by >= 0)) throw new Error(`counter ${this.name} cannot decrease (inc by ${by})`);
    this.stateFor(labels).v += by;
  }
  /** Current value (tests, status commands). */
  get(labels?: MetricLabels): number {
    return this.stateFor(labels).v;
  }
  protected renderSeries(pairs: Array<readonly [string, string]>, s: { v: number }): string[] {
    return [`${this.name}${renderLabels(pairs)} ${formatValue(s.v)}`];
  }
}

/** A value that goes up and down (queue depth, catalog size). */
export class Gauge extends Metric<{ v: number }> {
  readonly type = 'gauge';
  protected initial(): { v: number } {
    return { v: 0 };
  }
  set(labels: MetricLabels | undefined, value: number): void {
    this.stateFor(labels).v = value;
  }
  inc(labels?: MetricLabels, by = 1): void {
    this.stateFor(labels).v += by;
  }
  dec(labels?: MetricLabels, by = 1): void {
    this.stateFor(labels).v -= by;
  }
  get(labels?: MetricLabels): number {
    return this.stateFor(labels).v;
  }
  protected renderSeries(pairs: Array<readonly [string, string]>, s: { v: number }): string[] {
    return [`${this.name}${renderLabels(pairs)} ${formatValue(s.v)}`];
  }
}

interface HistogramState {
  counts: number[];
  sum: number;
  count: number;
}

/** Observations bucketed by upper bound (cumulative `le` buckets, `_sum`, `_count`). */
export class Histogram extends Metric<HistogramState> {
  readonly type = 'histogram';
  readonly buckets: readonly number[];
  constructor(name: string, help: string, labelNames: readonly string[], buckets: readonly number[] = DEFAULT_BUCKETS) {
    super(name, help, labelNames);
    const sorted = [...new Set(buckets.filter((b) => Number.isFinite(b)))].sort((a, b) => a - b);
    if (sorted.length === 0) throw new Error(`histogram ${name} needs at least one finite bucket`);
    this.buckets = sorted;
  }
  protected initial(): HistogramState {
    return { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
  }
  observe(labels: MetricLabels | undefined, value: number): void {
    if (Number.isNaN(value)) return;
    const s = this.stateFor(labels);
    s.sum += value;
    s.count += 1;
    const i = this.buckets.findIndex((b) => value <= b);
    if (i >= 0) s.counts[i] = (s.counts[i] ?? 0) + 1;
  }
  /** Count and sum for one label set (tests). */
  get(labels?: MetricLabels): { count: number; sum: number } {
    const s = this.stateFor(labels);
    return { count: s.count, sum: s.sum };
  }
  protected renderSeries(pairs: Array<readonly [string, string]>, s: HistogramState): string[] {
    const lines: string[] = [];
    let cumulative = 0;
    this.buckets.forEach((b, i) => {
      cumulative += s.counts[i] ?? 0;
      lines.push(`${this.name}_bucket${renderLabels([...pairs, ['le', formatValue(b)]])} ${cumulative}`);
    });
    lines.push(`${this.name}_bucket${renderLabels([...pairs, ['le', '+Inf']])} ${s.count}`);
    lines.push(`${this.name}_sum${renderLabels(pairs)} ${formatValue(s.sum)}`);
    lines.push(`${this.name}_count${renderLabels(pairs)} ${s.count}`);
    return lines;
  }
}

type AnyMetric = Counter | Gauge | Histogram;

/** Holds metrics by name; registering the same name twice returns the first if compatible. */
export class MetricsRegistry {
  readonly #metrics = new Map<string, AnyMetric>();

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.#register(name, labelNames, Counter, () => new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.#register(name, labelNames, Gauge, () => new Gauge(name, help, labelNames));
  }

  histogram(name: string, help: string, labelNames: readonly string[] = [], buckets?: readonly number[]): Histogram {
    return this.#register(name, labelNames, Histogram, () => new Histogram(name, help, labelNames, buckets));
  }

  /** The whole registry in Prometheus text format, metrics in registration order. */
  render(): string {
    return [...this.#metrics.values()].map((m) => m.render()).join('');
  }

  #register<M extends AnyMetric>(
    name: string,
    labelNames: readonly string[],
    ctor: abstract new (...args: never[]) => M,
    make: () => M,
  ): M {
    const existing = this.#metrics.get(name);
    if (existing) {
      const same = existing.labelNames.length === labelNames.length && existing.labelNames.every((l, i) => l === labelNames[i]);
      if (!(existing instanceof ctor) || !same) {
        throw new Error(`metric ${name} already registered as ${existing.type} with labels [${existing.labelNames.join(',')}]`);
      }
      return existing;
    }
    const metric = make();
    this.#metrics.set(name, metric);
    return metric;
  }
}

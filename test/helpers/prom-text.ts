/**
 * Reads the Prometheus text exposition the way a scraper does: `# TYPE` lines name the metric
 * families, every other line is one sample `name{label="value",…} number`. Tests assert on
 * what `/metrics` says, not on prom-client's objects.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** Family name → type (counter, gauge, histogram, summary, untyped). */
  types: Map<string, string>;
  /**
   * The sum of the samples named `name` whose labels include `labels` (undefined when none
   * matches, so "absent" and "0" are told apart).
   */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** Whether a metric name (a sample name, or a family) is exposed, a histogram's _bucket/_sum/_count included. */
  has(name: string): boolean;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function unescape(v: string): string {
  return v.replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c));
}

export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const t = /^# TYPE (\S+) (\S+)/.exec(line);
      if (t) types.set(t[1]!, t[2]!);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = unescape(l[2]!);
    const raw = m[3]!;
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    samples.push({ name: m[1]!, labels, value });
  }
  return {
    samples,
    types,
    value(name, want = {}) {
      const hits = samples.filter((s) => s.name === name && Object.entries(want).every(([k, v]) => s.labels[k] === v));
      return hits.length === 0 ? undefined : hits.reduce((a, s) => a + s.value, 0);
    },
    has(name) {
      if (types.has(name) || samples.some((s) => s.name === name)) return true;
      const base = name.replace(/_(bucket|sum|count)$/, '');
      return base !== name && (types.get(base) === 'histogram' || types.get(base) === 'summary');
    },
  };
}

/** GETs `${baseUrl}/metrics` and parses it. */
export async function scrape(baseUrl: string): Promise<Exposition> {
  const res = await fetch(`${baseUrl}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return parseExposition(await res.text());
}

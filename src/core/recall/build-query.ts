import type { Incident } from '../types.js';
import { tokenize } from '../tokenize.js';
import { expressionFromGeneratorUrl, scanPromql } from './promql-terms.js';
import { percentDecode } from './percent-decode.js';

/**
 * Labels whose values describe *what* is failing (component, job, integration), not *which*
 * instance. High-cardinality identity labels (pod, instance, fingerprint-like ids) would only
 * add noise to a text query; identity is handled by the structural gate instead.
 */
export const QUERY_LABELS = [
  'job',
  'service',
  'container',
  'integration',
  'component',
  'app',
  'app_kubernetes_io_name',
  'controller',
  'reason',
  'phase',
  'condition',
  'resource',
  'mountpoint',
  'fstype',
  'device',
  'verb',
  'scope',
  'code',
] as const;

/** Labels that only route or identify; their *names* carry no meaning either. */
export const IGNORED_LABEL_NAMES: ReadonlySet<string> = new Set([
  'alertname',
  'severity',
  'prometheus',
  'instance',
  'cluster',
  'namespace',
  'pod',
  'endpoint',
  'uid',
  'receiver',
  'team',
]);

/**
 * Label names an expression uses for plumbing (which scrape job, which histogram bucket)
 * rather than for the subject; their values may still say something (`job="kube-state-metrics"`).
 */
const EXPR_PLUMBING_LABELS = new Set([...IGNORED_LABEL_NAMES, 'job', 'container', 'service', 'metrics_path', 'le', 'quantile']);

/**
 * How much each part of an alert counts in the text query, relative to the alertname, the
 * workload and descriptive label values (weight 1). A term found in several parts takes the
 * largest weight. 0 leaves a part out. Calibrated in eval/README.md.
 */
export interface QueryWeights {
  /** The `summary` annotation (the alert's one-line condition). */
  summary: number;
  /** The `description` annotation (specifics: values, objects, advice). */
  description: number;
  /** Label *names* (`persistentvolumeclaim`, `horizontalpodautoscaler`, `job_name`). */
  labelNames: number;
  /** Metric names of the PromQL expression in `generatorURL`. */
  exprMetrics: number;
  /** Label matcher names and positive values of that expression. */
  exprLabels: number;
  /** The last path segment and fragment of `runbook_url` (often the alert's own name). */
  runbookUrl: number;
  /** Most distinct pieces read from one expression (a bound on hostile input). */
  exprMaxTerms: number;
}

/** Every part at weight 1 and the expression unread: the query before weights existed. */
export const NEUTRAL_QUERY_WEIGHTS: Readonly<QueryWeights> = Object.freeze({
  summary: 1,
  description: 1,
  labelNames: 1,
  exprMetrics: 0,
  exprLabels: 0,
  runbookUrl: 0,
  exprMaxTerms: 200,
});

/** Query terms, each once, with the weight the search index multiplies its BM25 share by. */
export interface Query {
  tokens: string[];
  weights: Map<string, number>;
}

/** Bare numbers (values, IPs, ports, ordinals) match runbooks' sample output by accident. */
const isNumber = (t: string): boolean => /^\d+$/.test(t);

type Source = 'fixed' | 'summary' | 'description' | 'labelNames' | 'exprMetrics' | 'exprLabels' | 'runbookUrl';

/** An alert's query terms by where they came from, before weighting. */
export type QueryParts = ReadonlyArray<{ source: Source; tokens: readonly string[] }>;

/**
 * Tokenized parts of an incident, remembered per incident object: calibration recalls the same
 * alert under hundreds of weightings, and tokenizing is most of a query's cost.
 */
const partsCache = new WeakMap<Incident, { maxTerms: number; parts: QueryParts }>();

/** The incident's text, tokenized by source (see QueryWeights). */
export function queryParts(incident: Incident, exprMaxTerms: number): QueryParts {
  const hit = partsCache.get(incident);
  if (hit && hit.maxTerms === exprMaxTerms) return hit.parts;
  const parts: Array<{ source: Source; tokens: string[] }> = [];
  const add = (source: Source, text: string): void => {
    if (text !== '') parts.push({ source, tokens: tokenize(text).filter((t) => !isNumber(t)) });
  };
  add('fixed', incident.alertname);
  // `title` is the summary, or the alertname when there is none; `message` the description
  // (or `message`), or the summary when there is none. The description is weighed against
  // the summary only when both exist: alone, it is the alert's only statement of the condition.
  const hasSummary = incident.title !== '' && incident.title !== incident.alertname;
  if (hasSummary) add('summary', incident.title);
  add(!hasSummary || incident.message === incident.title ? 'summary' : 'description', incident.message);
  const wl = incident.workload;
  // A host's kind says nothing about the alert (every node-exporter alert has one): its name only.
  if (wl) add('fixed', wl.kind === 'host' ? wl.name : `${wl.kind ?? ''} ${wl.name}`);
  for (const key of QUERY_LABELS) {
    const v = incident.labels[key];
    if (v) add('fixed', v);
  }
  for (const name of Object.keys(incident.labels)) {
    if (!IGNORED_LABEL_NAMES.has(name)) add('labelNames', name.replace(/_/g, ' '));
  }
  if (incident.generatorUrl) {
    const terms = scanPromql(expressionFromGeneratorUrl(incident.generatorUrl), exprMaxTerms);
    add('exprMetrics', terms.metrics.join(' '));
    add('exprLabels', [...terms.labelNames.filter((n) => !EXPR_PLUMBING_LABELS.has(n)), ...terms.labelValues].join(' '));
  }
  if (incident.runbookUrl) add('runbookUrl', runbookUrlTail(incident.runbookUrl));
  partsCache.set(incident, { maxTerms: exprMaxTerms, parts });
  return parts;
}

/**
 * Query enrichment (SPEC §5): alertname, summary, description, workload, selected label
 * values, label names, the PromQL expression of `generatorURL` and the tail of `runbook_url`,
 * each part weighted (see QueryWeights); a term found in several parts takes the largest weight.
 */
export function buildQuery(incident: Incident, w: Readonly<QueryWeights> = NEUTRAL_QUERY_WEIGHTS): Query {
  const weightOf: Record<Source, number> = {
    fixed: 1,
    summary: w.summary,
    description: w.description,
    labelNames: w.labelNames,
    exprMetrics: w.exprMetrics,
    exprLabels: w.exprLabels,
    runbookUrl: w.runbookUrl,
  };
  const weights = new Map<string, number>();
  for (const { source, tokens } of queryParts(incident, w.exprMaxTerms)) {
    const weight = weightOf[source];
    if (weight <= 0) continue;
    for (const t of tokens) {
      const prev = weights.get(t);
      if (prev === undefined || weight > prev) weights.set(t, weight);
    }
  }
  return { tokens: [...weights.keys()], weights };
}

/**
 * The words of a runbook URL that name the alert: its last path segment (without `.md` /
 * `.html`) and its fragment. `https://runbooks.example.dev/kubernetes/kubepodcrashlooping/`
 * and `…/runbooks.md#KubePodCrashLooping` both give the alert's name; the host and the
 * folders (`runbooks`, `blob`, `main`) do not.
 */
export function runbookUrlTail(url: string): string {
  const cut = url.slice(0, 2048);
  const hash = cut.indexOf('#');
  const fragment = hash >= 0 ? cut.slice(hash + 1) : '';
  const path = (hash >= 0 ? cut.slice(0, hash) : cut).replace(/\?.*$/s, '').replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '');
  const segments = path.split('/').filter((s) => s !== '');
  const last = segments[segments.length - 1] ?? '';
  return `${percentDecode(last, false).replace(/\.(md|html?)$/i, '')} ${percentDecode(fragment, false)}`.trim();
}

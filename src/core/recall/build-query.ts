import type { Incident } from '../types.js';
import { tokenize } from '../tokenize.js';

/**
 * Labels whose values describe *what* is failing (component, job, integration), not *which*
 * instance. High-cardinality identity labels (pod, instance, fingerprint-like ids) would only
 * add noise to a text query; identity is handled by the structural gate instead.
 */
const QUERY_LABELS = [
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
const IGNORED_LABEL_NAMES = new Set([
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
 * Query enrichment (SPEC §5): title + message + workload + alertname + selected labels.
 * Label names are included too: `persistentvolumeclaim` or `horizontalpodautoscaler` say which
 * kind of object the alert is about even when its name is opaque.
 */
export function buildQueryText(incident: Incident): string {
  const parts: string[] = [incident.alertname, incident.title, incident.message];
  const w = incident.workload;
  if (w) parts.push(w.kind ?? '', w.name);
  for (const key of QUERY_LABELS) {
    const v = incident.labels[key];
    if (v) parts.push(v);
  }
  for (const name of Object.keys(incident.labels)) {
    if (!IGNORED_LABEL_NAMES.has(name)) parts.push(name.replace(/_/g, ' '));
  }
  return parts.filter(Boolean).join(' ');
}

/**
 * Query tokens for the search index. Bare numbers (values, IPs, ports, ordinals) are dropped:
 * they match runbooks' sample output by accident and say nothing about the failure.
 */
export function buildQuery(incident: Incident): string[] {
  return tokenize(buildQueryText(incident)).filter((t) => !/^\d+$/.test(t));
}

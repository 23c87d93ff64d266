/**
 * Identity (SPEC §2): "this alert on that thing", reduced so restarts, rollouts and re-sends keep
 * the same identity, and the trigger key built from it. The precedence, first match wins (see
 * docs/identity.md):
 *
 * 1. a Kubernetes object: controller labels, an explicit ARN (cloud), the pod reduced to its
 *    controller, PVC, HPA, PV, node; a namespaced `service`;
 * 2. a host: `instance` reduced to its host, then `host`, `hostname`, `nodename` — also when the
 *    pod is the exporter DaemonSet that scraped the host (node-exporter in kube-prometheus);
 * 3. a PagerDuty service (its id), a bare `service`, the scrape `job`;
 * 4. a Grafana rule: `grafana_folder` (+ `rulename`), else `__alert_rule_uid__`;
 * 5. the namespace alone; else nothing.
 *
 * Then, always: Grafana's `rulename` (the rule a `DatasourceNoData` is about) and the team's own
 * `identity.labels`, appended to the key. Kubernetes keys keep the form they always had.
 */
import { createHash } from 'node:crypto';
import { parseArn } from './arn.js';
import { reduceHost } from './host-name.js';
import { reduceJobName, reducePodName, reduceReplicaSetName } from './pod-name.js';
import type { IdentityBasis, IncidentIdentity, Workload } from './types.js';

export { reducePodName, reduceReplicaSetName, reduceJobName } from './pod-name.js';
export { parseArn } from './arn.js';
export { reduceHost } from './host-name.js';
export type { IncidentIdentity } from './types.js';

type Labels = Readonly<Record<string, string | undefined>>;

const NAMESPACE_LABELS = ['namespace', 'exported_namespace'] as const;
const CLUSTER_LABELS = ['cluster', 'k8s_cluster', 'cluster_name'] as const;
const ACCOUNT_LABELS = ['account', 'account_id', 'aws_account_id'] as const;
const REGION_LABELS = ['region', 'aws_region'] as const;
/** Labels that name an ARN on purpose; any other label whose value is an ARN comes after. */
const ARN_LABELS = ['arn', 'resource_arn', 'aws_arn', 'resource'] as const;
/** Labels naming the machine an alert is about, strongest first (`node` is Kubernetes' own, above). */
export const HOST_LABELS = ['instance', 'host', 'hostname', 'nodename'] as const;
/** Kinds that are a machine: a host, or a Kubernetes node (the same thing seen by the cluster). */
export const HOST_KINDS: ReadonlySet<string> = new Set(['host', 'node']);
/** Key kinds that identify an alert without being a thing it runs on (no catalog `resource` names them). */
export const NOT_WORKLOAD_KINDS: ReadonlySet<string> = new Set(['scrape_job', 'grafana_rule', 'pagerduty_service']);

/** An identity and the trigger key it gives. */
export interface Identity extends IncidentIdentity {
  /** What the alert runs on, as recall's structural gate compares it; absent when nothing is known. */
  workload?: Workload;
  triggerKey: string;
}

export interface IdentityOptions {
  /** The team's own identifying labels (`identity.labels`): appended to the key when the alert carries them. */
  labels?: readonly string[];
}

function pick(labels: Labels, keys: readonly string[]): [string, string] | undefined {
  for (const k of keys) {
    const v = labels[k]?.trim();
    if (v) return [k, v];
  }
  return undefined;
}

interface Target {
  name: string;
  kind: string;
  basis: IdentityBasis;
  /** The labels it was read from. */
  from: string[];
  /** Cluster-scoped objects (nodes, PVs) have no namespace, whatever the scrape added. */
  clusterScoped?: boolean;
  account?: string;
  region?: string;
  /** False for identities that are not a thing the alert runs on (a scrape job, a rule, a PagerDuty service). */
  isWorkload: boolean;
}

function findArn(labels: Labels): Target | undefined {
  const others = Object.keys(labels)
    .filter((k) => !(ARN_LABELS as readonly string[]).includes(k))
    .sort();
  for (const key of [...ARN_LABELS, ...others]) {
    const value = labels[key];
    if (!value?.startsWith('arn:')) continue;
    const arn = parseArn(value);
    if (!arn) continue;
    const kind = arn.resourceType ? `${arn.service}:${arn.resourceType.toLowerCase()}` : arn.service;
    const target: Target = { name: arn.id, kind, basis: 'cloud', from: [key], isWorkload: true };
    if (arn.account && arn.account !== 'aws') target.account = arn.account;
    if (arn.region) target.region = arn.region;
    return target;
  }
  return undefined;
}

const k8s = (name: string, kind: string, from: string, clusterScoped = false): Target => ({
  name,
  kind,
  basis: 'kubernetes',
  from: [from],
  isWorkload: true,
  ...(clusterScoped ? { clusterScoped } : {}),
});

/** The host named by the host labels, reduced. */
function findHost(labels: Labels): Target | undefined {
  for (const key of HOST_LABELS) {
    const raw = labels[key]?.trim();
    const host = raw ? reduceHost(raw) : undefined;
    if (host) return { name: host, kind: 'host', basis: 'host', from: [key], isWorkload: true };
  }
  return undefined;
}

/**
 * True when a pod of DaemonSet `ds` is the exporter that scraped the alert's series: its scrape
 * `job` or `service` is the DaemonSet (kube-prometheus: `job="node-exporter"`, pod
 * `node-exporter-x2k4q`). One such pod runs per machine, so the machine is what the alert is
 * about; a kube-state-metrics alert *about* a DaemonSet's pod carries its own job.
 */
function isHostExporter(labels: Labels, ds: string): boolean {
  const d = ds.toLowerCase();
  const job = labels['job']?.trim().toLowerCase();
  const service = labels['service']?.trim().toLowerCase();
  return (job !== undefined && job !== '' && (job === d || d.endsWith(`-${job}`))) || service === d;
}

/**
 * The thing the alert is about, most specific first (the module comment has the order). An
 * explicit ARN outranks the pod label because exporters (CloudWatch, yace) carry their *own* pod
 * as a target label. The Prometheus `job` label is the scrape job, never a Kubernetes Job: only
 * `job_name` is.
 */
function findTarget(labels: Labels, hasNamespace: boolean): Target | undefined {
  const v = (k: string): string | undefined => labels[k]?.trim() || undefined;

  const deployment = v('deployment');
  if (deployment) return k8s(deployment, 'deployment', 'deployment');
  const statefulset = v('statefulset');
  if (statefulset) return k8s(statefulset, 'statefulset', 'statefulset');
  const daemonset = v('daemonset');
  if (daemonset) return k8s(daemonset, 'daemonset', 'daemonset');
  const job = v('job_name');
  if (job) {
    const r = reduceJobName(job);
    return k8s(r.name, r.kind, 'job_name');
  }
  const cronjob = v('cronjob');
  if (cronjob) return k8s(cronjob, 'cronjob', 'cronjob');
  const replicaset = v('replicaset');
  if (replicaset) return k8s(reduceReplicaSetName(replicaset), 'deployment', 'replicaset');

  const arn = findArn(labels);
  if (arn) return arn;

  const pod = v('pod');
  if (pod) {
    const r = reducePodName(pod);
    if (r.kind === 'daemonset' && isHostExporter(labels, r.name)) {
      const node = v('node');
      if (node) return { ...k8s(node, 'node', 'node', true), from: ['node', 'pod'] };
      const host = findHost(labels);
      if (host) return { ...host, from: [...host.from, 'pod'] };
    }
    return k8s(r.name, r.kind, 'pod');
  }
  const pvc = v('persistentvolumeclaim');
  if (pvc) return k8s(pvc, 'persistentvolumeclaim', 'persistentvolumeclaim');
  const hpa = v('horizontalpodautoscaler');
  if (hpa) return k8s(hpa, 'horizontalpodautoscaler', 'horizontalpodautoscaler');
  const pv = v('persistentvolume');
  if (pv) return k8s(pv, 'persistentvolume', 'persistentvolume', true);
  const node = v('node');
  if (node) return k8s(node, 'node', 'node', true);
  const service = v('service');
  // In a namespace, `service` is the Kubernetes Service (kube-prometheus `TargetDown`).
  if (service && hasNamespace) return k8s(service, 'service', 'service');

  const host = findHost(labels);
  if (host) return host;

  const pagerduty = v('pagerduty_service');
  if (pagerduty) return { name: pagerduty, kind: 'pagerduty_service', basis: 'pagerduty_service', from: ['pagerduty_service'], isWorkload: false };
  if (service) return { name: service, kind: 'service', basis: 'service', from: ['service'], isWorkload: true };
  const scrapeJob = v('job');
  if (scrapeJob) return { name: scrapeJob, kind: 'scrape_job', basis: 'scrape_job', from: ['job'], isWorkload: false };

  const folder = v('grafana_folder');
  const rule = v('rulename');
  const uid = v('__alert_rule_uid__');
  const grafana = (name: string, from: string[]): Target => ({ name, kind: 'grafana_rule', basis: 'grafana_rule', from, isWorkload: false });
  if (folder) return rule ? grafana(`${folder}/${rule}`, ['grafana_folder', 'rulename']) : grafana(folder, ['grafana_folder']);
  if (uid) return grafana(uid, ['__alert_rule_uid__']);
  if (rule) return grafana(rule, ['rulename']);
  return undefined;
}

/** Labels that are part of the key already (or never identify): `identity.labels` skips them. */
const NOT_QUALIFIERS: ReadonlySet<string> = new Set(['alertname', ...NAMESPACE_LABELS, ...CLUSTER_LABELS, ...ACCOUNT_LABELS]);

/**
 * The identity of an alert from its labels, and its trigger key. Pure: the same labels (and
 * options) always give the same identity.
 */
export function deriveIdentity(alertname: string, labels: Labels, options: IdentityOptions = {}): Identity {
  const ns = pick(labels, NAMESPACE_LABELS);
  const target = findTarget(labels, ns !== undefined);
  const cluster = pick(labels, CLUSTER_LABELS);
  const accountLabel = pick(labels, ACCOUNT_LABELS);
  const account = accountLabel?.[1] ?? target?.account;
  const region = pick(labels, REGION_LABELS)?.[1] ?? target?.region;
  const namespace = target?.clusterScoped ? '' : (ns?.[1] ?? '');

  const used = [...(target?.from ?? [])];
  if (namespace !== '' && ns) used.push(ns[0]);
  if (cluster) used.push(cluster[0]);
  if (accountLabel) used.push(accountLabel[0]);

  const qualifiers: Array<[string, string]> = [];
  const qualify = (name: string): void => {
    const value = labels[name]?.trim();
    if (!value || used.includes(name) || NOT_QUALIFIERS.has(name) || qualifiers.some(([n]) => n === name)) return;
    qualifiers.push([name, value]);
  };
  qualify('rulename');
  for (const name of options.labels ?? []) qualify(name);
  qualifiers.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  used.push(...qualifiers.map(([n]) => n));

  const basis: IdentityBasis = target?.basis ?? (ns ? 'namespace' : 'none');
  const parts = [alertname, namespace, target?.kind, target?.name, cluster?.[1]];
  if (account || qualifiers.length > 0) parts.push(account ?? '');
  for (const [name, value] of qualifiers) parts.push(`${name}=${value}`);

  const identity: Identity = { basis, labels: used, triggerKey: parts.map(keyPart).join('|') };
  const workload = workloadOf(target, labels, namespace, ns !== undefined);
  if (workload) {
    if (cluster) workload.cluster = cluster[1];
    if (account) workload.account = account;
    if (region) workload.region = region;
    identity.workload = workload;
  }
  return identity;
}

/**
 * What recall compares with a catalog entry's `resource`. For an identity that is not a thing
 * the alert runs on (a scrape job, a rule, a PagerDuty service) it is what it was before those
 * identities existed: the `service` label, else the namespace alone, else nothing.
 */
function workloadOf(target: Target | undefined, labels: Labels, namespace: string, hasNamespace: boolean): Workload | undefined {
  if (target?.isWorkload) return { namespace, name: target.name, kind: target.kind };
  const service = labels['service']?.trim();
  if (service) return { namespace, name: service, kind: 'service' };
  return hasNamespace ? { namespace, name: '' } : undefined;
}

/**
 * Derive the workload an alert is about from its labels. Returns undefined when the labels
 * name neither a namespace nor a workload. A namespace without a workload yields
 * `{ namespace, name: '' }` (namespace-scoped alerts such as quota). Kinds are lower-case.
 */
export function deriveWorkload(labels: Labels): Workload | undefined {
  return deriveIdentity(labels['alertname'] ?? '', labels).workload;
}

/** `|` separates key parts, so a part containing one is escaped to keep keys unambiguous. */
function keyPart(s: string | undefined): string {
  return (s ?? '').trim().toLowerCase().replaceAll('%', '%25').replaceAll('|', '%7c');
}

/**
 * Trigger key of a Kubernetes-shaped workload: lower-case `alertname|namespace|kind|name|cluster`,
 * plus `|account` when the account is known. Missing parts are empty strings. Incidents from a
 * source get theirs from {@link deriveIdentity}, which gives the same key for these workloads.
 */
export function triggerKey(alertname: string, workload?: Workload): string {
  const parts = [alertname, workload?.namespace, workload?.kind, workload?.name, workload?.cluster];
  if (workload?.account) parts.push(workload.account);
  return parts.map(keyPart).join('|');
}

/**
 * Stable fallback fingerprint when a source omits one: 16 hex chars of sha256 over the
 * alertname and the labels sorted by key (same labels ⇒ same alert instance).
 */
export function incidentFingerprint(alertname: string, labels: Labels): string {
  const sorted = Object.keys(labels)
    .sort()
    .map((k) => [k, labels[k] ?? '']);
  return createHash('sha256')
    .update(JSON.stringify([alertname, sorted]))
    .digest('hex')
    .slice(0, 16);
}

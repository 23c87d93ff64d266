/**
 * Workload identity (SPEC §2): "this alert runs on that thing", reduced so restarts,
 * rollouts and re-sends keep the same identity, and the trigger key built from it.
 */
import { createHash } from 'node:crypto';
import { parseArn } from './arn.js';
import { reduceJobName, reducePodName, reduceReplicaSetName } from './pod-name.js';
import type { Workload } from './types.js';

export { reducePodName, reduceReplicaSetName, reduceJobName } from './pod-name.js';
export type { ControllerKind, ReducedName } from './pod-name.js';
export { parseArn } from './arn.js';
export type { ParsedArn } from './arn.js';

type Labels = Readonly<Record<string, string | undefined>>;

const NAMESPACE_LABELS = ['namespace', 'exported_namespace'] as const;
const CLUSTER_LABELS = ['cluster', 'k8s_cluster', 'cluster_name'] as const;
const ACCOUNT_LABELS = ['account', 'account_id', 'aws_account_id'] as const;
const REGION_LABELS = ['region', 'aws_region'] as const;
/** Labels that name an ARN on purpose; any other label whose value is an ARN comes after. */
const ARN_LABELS = ['arn', 'resource_arn', 'aws_arn', 'resource'] as const;

function pick(labels: Labels, keys: readonly string[]): string | undefined {
  for (const k of keys) {
    const v = labels[k]?.trim();
    if (v) return v;
  }
  return undefined;
}

interface Target {
  name: string;
  kind: string;
  /** Cluster-scoped objects (nodes, PVs) have no namespace, whatever the scrape added. */
  clusterScoped?: boolean;
  account?: string;
  region?: string;
}

function findArn(labels: Labels): Target | undefined {
  const preferred = ARN_LABELS.map((k) => labels[k]);
  const others = Object.keys(labels)
    .filter((k) => !(ARN_LABELS as readonly string[]).includes(k))
    .sort()
    .map((k) => labels[k]);
  for (const value of [...preferred, ...others]) {
    if (!value?.startsWith('arn:')) continue;
    const arn = parseArn(value);
    if (!arn) continue;
    const kind = arn.resourceType ? `${arn.service}:${arn.resourceType.toLowerCase()}` : arn.service;
    const target: Target = { name: arn.id, kind };
    if (arn.account && arn.account !== 'aws') target.account = arn.account;
    if (arn.region) target.region = arn.region;
    return target;
  }
  return undefined;
}

/**
 * The thing the alert is about, most specific controller first. An explicit ARN outranks the
 * pod label because exporters (CloudWatch, yace) carry their *own* pod as a target label.
 * `service` is last: in kube-prometheus it is usually the scrape service (`kubelet`).
 * The Prometheus `job` label is the scrape job, never a Kubernetes Job: only `job_name` is.
 */
function findTarget(labels: Labels): Target | undefined {
  const v = (k: string): string | undefined => labels[k]?.trim() || undefined;

  const deployment = v('deployment');
  if (deployment) return { name: deployment, kind: 'deployment' };
  const statefulset = v('statefulset');
  if (statefulset) return { name: statefulset, kind: 'statefulset' };
  const daemonset = v('daemonset');
  if (daemonset) return { name: daemonset, kind: 'daemonset' };
  const job = v('job_name');
  if (job) return reduceJobName(job);
  const cronjob = v('cronjob');
  if (cronjob) return { name: cronjob, kind: 'cronjob' };
  const replicaset = v('replicaset');
  if (replicaset) return { name: reduceReplicaSetName(replicaset), kind: 'deployment' };

  const arn = findArn(labels);
  if (arn) return arn;

  const pod = v('pod');
  if (pod) return reducePodName(pod);
  const pvc = v('persistentvolumeclaim');
  if (pvc) return { name: pvc, kind: 'persistentvolumeclaim' };
  const hpa = v('horizontalpodautoscaler');
  if (hpa) return { name: hpa, kind: 'horizontalpodautoscaler' };
  const pv = v('persistentvolume');
  if (pv) return { name: pv, kind: 'persistentvolume', clusterScoped: true };
  const node = v('node');
  if (node) return { name: node, kind: 'node', clusterScoped: true };
  const service = v('service');
  if (service) return { name: service, kind: 'service' };
  return undefined;
}

/**
 * Derive the workload an alert is about from its labels. Returns undefined when the labels
 * name neither a namespace nor a workload. A namespace without a workload yields
 * `{ namespace, name: '' }` (namespace-scoped alerts such as quota). Kinds are lower-case.
 */
export function deriveWorkload(labels: Labels): Workload | undefined {
  const target = findTarget(labels);
  const labelNamespace = pick(labels, NAMESPACE_LABELS);
  if (!target && !labelNamespace) return undefined;

  const workload: Workload = {
    namespace: target?.clusterScoped ? '' : (labelNamespace ?? ''),
    name: target?.name ?? '',
  };
  if (target) workload.kind = target.kind;
  const cluster = pick(labels, CLUSTER_LABELS);
  if (cluster) workload.cluster = cluster;
  const account = pick(labels, ACCOUNT_LABELS) ?? target?.account;
  if (account) workload.account = account;
  const region = pick(labels, REGION_LABELS) ?? target?.region;
  if (region) workload.region = region;
  return workload;
}

/** `|` separates key parts, so a part containing one is escaped to keep keys unambiguous. */
function keyPart(s: string | undefined): string {
  return (s ?? '').trim().toLowerCase().replaceAll('%', '%25').replaceAll('|', '%7c');
}

/**
 * Trigger key: lower-case `alertname|namespace|kind|name|cluster`, plus `|account` when the
 * account is known. Missing parts are empty strings.
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

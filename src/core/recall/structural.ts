import { HOST_KINDS } from '../identity.js';
import type { Entry, Incident, ResourceRef, StructuralTier, Workload } from '../types.js';

export interface StructuralVerdict {
  passed: boolean;
  tier?: StructuralTier;
  reason: string;
}

/** Lower-case and trim, so `Payments/Checkout-API` and `payments/checkout-api` agree. */
function norm(s: string | undefined): string {
  return (s ?? '').trim().toLowerCase();
}

/** Account and region must not contradict: absent on either side means unknown, not different. */
function cloudAgrees(ref: ResourceRef, w: Workload): string | null {
  if (ref.account && w.account && norm(ref.account) !== norm(w.account)) {
    return `account ${ref.account} ≠ ${w.account}`;
  }
  if (ref.region && w.region && norm(ref.region) !== norm(w.region)) {
    return `region ${ref.region} ≠ ${w.region}`;
  }
  return null;
}

/** A machine: a host (`instance`, `host`…) or a Kubernetes node — one thing seen two ways. */
const isHost = (w: Workload): boolean => w.kind !== undefined && HOST_KINDS.has(w.kind);

/** Compares one entry identity with the incident's workload. */
function compareRef(ref: ResourceRef, w: Workload): StructuralVerdict {
  const contradiction = cloudAgrees(ref, w);
  if (contradiction) return { passed: false, reason: `different cloud scope: ${contradiction}` };
  const refNs = norm(ref.namespace);
  const refName = norm(ref.name);
  const wNs = norm(w.namespace);
  const wName = norm(w.name);
  // A machine agrees only with the same machine, and never with a workload that shares its name.
  if (ref.kind === 'host' || isHost(w)) {
    if (ref.kind === 'host' && isHost(w)) {
      return refName === wName
        ? { passed: true, tier: 'exact', reason: `resource ${ref.raw} is the incident's host` }
        : { passed: false, reason: `different host: ${ref.raw} vs ${describe(w)}` };
    }
    if (ref.kind === 'host') return { passed: false, reason: `resource ${ref.raw} is a host; the incident is about ${describe(w) || 'no host'}` };
    if (refName) return { passed: false, reason: `the incident is about host ${w.name}, not the workload ${ref.raw}` };
  }
  if (refName && wName) {
    if (refName !== wName) return { passed: false, reason: `different workload: ${ref.raw} vs ${describe(w)}` };
    // Cloud ids carry no namespace; a named k8s entry must sit in the same namespace.
    if (refNs && wNs && refNs !== wNs) return { passed: false, reason: `different namespace: ${ref.raw} vs ${describe(w)}` };
    return { passed: true, tier: 'exact', reason: `resource ${ref.raw} is the incident's workload` };
  }
  // One side is a bare namespace: it holds the other when the namespaces agree.
  if (refNs && wNs && refNs === wNs) {
    return { passed: true, tier: 'namespace', reason: `namespace ${refNs} holds ${describe(w)}` };
  }
  return { passed: false, reason: `resource ${ref.raw} does not hold ${describe(w)}` };
}

/** `cluster/namespace/name`; a machine is `cluster/host` (the namespace of its exporter says nothing about it). */
export function describe(w: Workload): string {
  return [w.cluster, isHost(w) ? '' : w.namespace, w.name].filter((x) => x !== undefined && x !== '').join('/');
}

/**
 * Gate 1 (SPEC §6): does the entry's scope agree with the incident? Tiers, strongest first:
 * exact, namespace, runbook (resource-less; its `alerts` must list the alert when it has any),
 * scopeless (workload-less incident, resource-less entry). `knownAlerts` is the set of
 * alertnames some entry covers: an alert nobody covers by name can still be matched by content
 * (tier `runbook`, flagged `byContent`) so that renamed or custom alerts are not shut out.
 */
export function structuralGate(entry: Entry, incident: Incident, names: AlertNameContext): StructuralVerdict {
  if (entry.status !== 'active') return { passed: false, reason: `entry is ${entry.status}` };
  const refs = [entry.resource, entry.alertResource].filter((r): r is ResourceRef => r !== undefined);
  const alertname = incident.alertname.toLowerCase();
  if (refs.length > 0) {
    const w = incident.workload;
    if (!w) return { passed: false, reason: 'incident names no workload; a resource-scoped entry needs one' };
    let best: StructuralVerdict | undefined;
    for (const ref of refs) {
      const v = compareRef(ref, w);
      if (v.passed && (best === undefined || !best.passed || (best.tier === 'namespace' && v.tier === 'exact'))) best = v;
      if (!v.passed && best === undefined) best = v;
    }
    return best ?? { passed: false, reason: 'no identity' };
  }
  if (entry.alerts.length > 0 && !covers(entry, alertname, names)) {
    if (!names.opaque) {
      return { passed: false, reason: `covers ${entry.alerts.join(', ')}, not ${incident.alertname}` };
    }
    return {
      passed: true,
      tier: incident.workload ? 'runbook' : 'scopeless',
      reason: `no entry covers ${incident.alertname} by name; matched by content`,
    };
  }
  if (!incident.workload) return { passed: true, tier: 'scopeless', reason: 'workload-less incident, resource-less entry' };
  return {
    passed: true,
    tier: 'runbook',
    reason: entry.alerts.length > 0 ? `covers alert ${incident.alertname}` : 'resource-less entry',
  };
}

/** Whether the entry covers the alertname: by its own `alerts`, or as the catalog says (aliases, pointers). */
function covers(entry: Entry, alertname: string, names: AlertNameContext): boolean {
  return names.coveredBy ? names.coveredBy.has(entry.id) : entry.alerts.includes(alertname);
}

/** What the incident's alertname tells the structural gate, computed once per incident. */
export interface AlertNameContext {
  /**
   * True when no entry covers the alertname and the name carries no word the catalog knows
   * (hashed or generated names). Only then may an entry that lists other alerts
   * agree by content. A descriptive name that no entry lists (`ApacheRestart`) is evidence
   * that the catalog has no runbook for it, not an invitation to show a sibling's.
   */
  opaque: boolean;
  /**
   * Ids of the entries that cover the alertname (`alerts`, `aliases`, or a pointer page's
   * alerts handed to its target; see CatalogSnapshot.byAlert). Absent: each entry's own `alerts`.
   */
  coveredBy?: ReadonlySet<string>;
}

/**
 * Decides whether an alertname is opaque (see AlertNameContext). A name is descriptive when
 * it holds at least one plain word of three letters or more (`ApacheRestart`, `Watchdog`,
 * `etcdNoLeader`); generated ids such as `Alertfc7494` or `a9f3e1c2` hold none.
 */
export function alertNameContext(alertname: string, knownAlerts: ReadonlySet<string>): AlertNameContext {
  const lower = alertname.toLowerCase();
  if (knownAlerts.has(lower)) return { opaque: false };
  const words = splitAlertName(alertname)
    .map((w) => w.toLowerCase())
    .filter((w) => /^[a-z]{3,}$/.test(w) && !GENERIC_NAME_WORDS.has(w));
  return { opaque: words.length === 0 };
}

/** CamelCase / acronym / separator split of an alert name: `KubeAPIDown` → Kube, API, Down. */
export function splitAlertName(name: string): string[] {
  // Both patterns look at a fixed window around each position (no nested quantifier), so the
  // split is linear in the name's length: `([A-Z]+)([A-Z][a-z])` backtracked over every
  // capital of an all-caps name and took minutes on a 1 MiB one.
  return name
    .replace(/([a-z0-9])(?=[A-Z])/g, '$1 ')
    .replace(/([A-Z])(?=[A-Z][a-z])/g, '$1 ')
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '');
}

/** Words that appear in alert names without saying what is wrong. */
const GENERIC_NAME_WORDS = new Set(['alert', 'alarm', 'warn', 'warning', 'critical', 'page', 'test']);

/** True when the structural verdict came from an explicit `alerts` listing (or an alias of one). */
export function coversByName(entry: Entry, incident: Incident, names?: AlertNameContext): boolean {
  return covers(entry, incident.alertname.toLowerCase(), names ?? { opaque: false });
}

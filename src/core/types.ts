/**
 * Domain vocabulary shared by every layer (SPEC §2). Pure types: no SDK imports.
 */

export const SEVERITIES = ['critical', 'warning', 'info', 'none'] as const;
export type Severity = (typeof SEVERITIES)[number];

/**
 * "This alert runs on that thing", reduced to a stable identity (pod → controller, ARN → id,
 * `instance` → its host with kind `host`).
 */
export interface Workload {
  namespace: string;
  name: string;
  kind?: string;
  cluster?: string;
  account?: string;
  region?: string;
}

/** Which rule of the identity precedence (core/identity.ts) chose an alert's identity. */
export type IdentityBasis = 'kubernetes' | 'cloud' | 'host' | 'pagerduty_service' | 'service' | 'scrape_job' | 'grafana_rule' | 'namespace' | 'none';

/** What made an incident's identity: shown by `reprise recall --json` and logged. */
export interface IncidentIdentity {
  basis: IdentityBasis;
  /** The label names the identity (and so the trigger key) was read from, in precedence order. */
  labels: string[];
}

/** Which field of an alert a link on its card was taken from; the label is fixed, never alert text. */
export type AlertLinkLabel = 'source' | 'runbook' | 'dashboard' | 'panel' | 'silence' | 'image';

/** A link an alert carries (its source, runbook, dashboards, a silence), checked: http(s) only, host allowed. */
export interface AlertLink {
  label: AlertLinkLabel;
  url: string;
}

/** A link an alert carried that is not shown, and why (`javascript:` scheme, host not allowed…). */
export interface RefusedLink {
  /** The field it came from: `runbook_url`, `generatorURL`, `dashboardURL`, … */
  field: string;
  reason: string;
}

/**
 * The notification group an alert arrived in (Alertmanager's `group_by`): what a card about the
 * whole group can say. One object per webhook call, shared by its incidents.
 */
export interface AlertGroup {
  /** `groupLabels`: the labels the group was formed by. */
  labels: Record<string, string>;
  /** `commonLabels`: the labels every alert of the notification shares. */
  commonLabels: Record<string, string>;
  /** Alerts Alertmanager left out of this notification (`max_alerts` on the receiver); 0 when none. */
  truncatedAlerts: number;
  /** The receiver that sent it. */
  receiver?: string;
}

/** One normalized firing or resolution from any source. */
export interface Incident {
  source: string;
  status: 'firing' | 'resolved';
  /** The source's id for this alert instance. */
  fingerprint: string;
  /**
   * lower-case `alertname|namespace|kind|name|cluster` (+ `|account`, + `|label=value` for
   * identifying labels beyond the thing itself); see core/identity.ts.
   */
  triggerKey: string;
  alertname: string;
  title: string;
  message: string;
  severity: Severity;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  /** True when the source sent no start time and `startsAt` is when the alert arrived. */
  startsAtEstimated?: boolean;
  endsAt?: string;
  workload?: Workload;
  /** Which labels made the trigger key (absent on incidents recorded before it was kept). */
  identity?: IncidentIdentity;
  /** `runbook_url` annotation, when the alert carries one. */
  runbookUrl?: string;
  /** The source's link back to the rule; Prometheus puts the rule's PromQL in it (`g0.expr`). */
  generatorUrl?: string;
  /** The Alertmanager that sent it (its `externalURL`): where a silence can be made. */
  alertmanagerUrl?: string;
  /** Alertmanager's `groupKey` of the notification it came in (the team's `group_by`): storm coalescing reads it. */
  groupKey?: string;
  /** The notification group it came in (`groupLabels`, `commonLabels`, `truncatedAlerts`), when the source sent one. */
  group?: AlertGroup;
  /**
   * The links its card shows, checked when it arrived (core/alert-links.ts): http(s) only, hosts
   * in `links.allowed_hosts`. Absent on incidents built before links were kept: derived then.
   */
  links?: AlertLink[];
  /** Links it carried that are not shown, each with why (said in the thread, logged). */
  refusedLinks?: RefusedLink[];
  /** What the rule's query evaluated to, as text: Grafana's `values` (`A=5, C=1`) or `valueString`. */
  value?: string;
  /**
   * The source reopened an incident it had resolved (PagerDuty `incident.reopened`): a new episode
   * of the same trigger in the thread the incident already has, not a new card. `startsAt` is
   * when it reopened.
   */
  reopened?: boolean;
}

export const ENTRY_TYPES = ['Incident', 'Playbook', 'Concept'] as const;
export type EntryType = (typeof ENTRY_TYPES)[number];
export type EntryStatus = 'active' | 'draft' | 'retired';

/** Parsed identity of an entry's `resource` / `alert_resource`. */
export interface ResourceRef {
  /** Raw value as written. */
  raw: string;
  /** `host`: a machine (`resource: host/node1`), compared only with hosts and Kubernetes nodes. */
  kind?: 'host';
  namespace?: string;
  name?: string;
  account?: string;
  region?: string;
}

/** One markdown file in the catalog. `id` is its path relative to the catalog root. */
export interface Entry {
  id: string;
  type: EntryType;
  title: string;
  description: string;
  resource?: ResourceRef;
  alertResource?: ResourceRef;
  tags: string[];
  timestamp?: string;
  fingerprint?: string;
  status: EntryStatus;
  lastValidated?: string;
  /** Alertnames a resource-less entry covers (lower-case, for comparison). */
  alerts: string[];
  /**
   * The same alertnames as written (`KubePodCrashLooping`): their CamelCase parts are the
   * words that name the condition, used by search and by recall's name-coverage boost.
   */
  alertNames?: string[];
  source?: string;
  /**
   * Id of the entry this one only points to: a foreign runbook whose whole body is a
   * "renamed / see …" link (`NodeRAIDDiskFailure.md` → `node/NodeRAIDDegraded.md`). The
   * target then covers this entry's alerts too.
   */
  pointsTo?: string;
  /** `## Heading` → body text, heading lower-cased. */
  sections: Record<string, string>;
  /** Markdown body without frontmatter. */
  body: string;
  /** True when the file had no `type` and was read as a foreign runbook. */
  foreign: boolean;
}

export type LintSeverity = 'error' | 'warning';
export interface LintProblem {
  file: string;
  line: number;
  rule: string;
  severity: LintSeverity;
  message: string;
}

/** One search hit: an entry with its BM25 score against the query. */
export interface Candidate {
  entry: Entry;
  score: number;
}

export type StructuralTier = 'exact' | 'namespace' | 'runbook' | 'runbook_url' | 'scopeless';
/** `sibling` is the margin gate's sibling rule (issue 22); metrics count its refusals as the margin gate's. */
export type GateName = 'structural' | 'margin' | 'sibling' | 'rerank' | 'outcome' | 'status' | 'silence' | 'confirm' | 'verify';

/** One decision recall made; "why didn't it recall?" always has an answer. */
export interface GateTraceStep {
  gate: GateName;
  entry: string | null;
  passed: boolean;
  value: number | string | null;
  threshold: number | string | null;
  reason: string;
  /** The candidate it was compared with: the near-sibling (sibling gate) or the runner-up (margin gate). */
  rival?: string;
}

export type AnswerKind = 'incident' | 'runbook';
export interface Answer {
  kind: AnswerKind;
  entry: string;
  confidence: number;
  /** Related runbooks answered with `entry` when the alert does not say which one it is (a runbook answer only). */
  related?: string[];
}

export interface NearMiss {
  entry: string;
  gate: GateName;
  reason: string;
}

export interface TrackRecord {
  recalls: number;
  resolved: number;
  up: number;
  down: number;
  /** The SPEC's smoothed success rate `(S + 1) / (N + 2)`: what the outcome gate compares to its floor. */
  rate: number;
  /** Confidence multiplier `(S + 1) / (N + 1)`: 1 until a failure or 👎 (see ledger-reads). */
  factor: number;
}

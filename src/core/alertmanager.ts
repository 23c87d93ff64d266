/**
 * Alertmanager v4 webhook → Incidents (SPEC §4). Lenient where Alertmanager itself is
 * (missing annotations, version, extra fields), strict where identity depends on it.
 */
import { z } from 'zod';
import { attachLinks, withScheme, type LinkPolicy } from './alert-links.js';
import { RepriseError } from './errors.js';
import { formatIssues } from './format-issues.js';
import { deriveIdentity, incidentFingerprint, type IdentityOptions } from './identity.js';
import type { AlertGroup, Incident, RefusedLink, Severity } from './types.js';

/** Go's zero `time.Time`: Alertmanager's way of saying "no end yet". */
const ZERO_TIME_PREFIX = '0001-01-01';

const isTimestamp = (s: string): boolean => s.startsWith(ZERO_TIME_PREFIX) || !Number.isNaN(Date.parse(s));
const timestamp = z.string().refine(isTimestamp, { message: 'must be an RFC 3339 timestamp' });
const stringMap = z.record(z.string(), z.string());
/** Fields we only pass through: a wrong type there is not worth rejecting an alert for. */
const looseString = z.string().optional().catch(undefined);

const alertSchema = z.object({
  status: z.enum(['firing', 'resolved']),
  labels: z.object({ alertname: z.string().trim().min(1) }).catchall(z.string()),
  annotations: stringMap.nullish(),
  startsAt: timestamp.optional(),
  endsAt: timestamp.nullish(),
  generatorURL: looseString,
  fingerprint: looseString,
  // Grafana adds these to each alert (its webhook contact point); Alertmanager never sends them.
  silenceURL: looseString,
  dashboardURL: looseString,
  panelURL: looseString,
  imageURL: looseString,
  values: z
    .record(z.string(), z.union([z.number(), z.string(), z.null()]))
    .nullish()
    .catch(undefined),
  valueString: looseString,
});

const envelopeSchema = z.object({
  version: z.unknown().optional(),
  groupKey: looseString,
  status: looseString,
  receiver: looseString,
  externalURL: looseString,
  groupLabels: stringMap.nullish().catch(undefined),
  commonLabels: stringMap.nullish().catch(undefined),
  truncatedAlerts: z.number().int().nonnegative().optional().catch(undefined),
  // Alerts are validated one by one (see parseSteps), so a big group can yield in between.
  alerts: z.array(z.unknown()).min(1),
});

export type AlertmanagerAlert = z.infer<typeof alertSchema>;

/** A label or annotation value cut to the field limit. */
export interface TruncatedField {
  alert: number;
  field: string;
  /** Length before truncation, in characters. */
  length: number;
}

/** The incidents of one webhook call plus the group context, for logs. */
export interface AlertmanagerBatch {
  incidents: Incident[];
  /** Values cut to the field limit (logged by the caller; the alert is kept). */
  truncated: TruncatedField[];
  groupKey?: string;
  receiver?: string;
  externalURL?: string;
  /** `groupLabels`, `commonLabels` and `truncatedAlerts` of the notification (also on each incident's `group`). */
  group?: AlertGroup;
  /** Links the alerts carried that their cards do not show, each with why (logged by the caller). */
  refusedLinks: Array<RefusedLink & { alert: number }>;
  /**
   * Alerts left out because they are malformed, each with why. One bad alert must not cost the
   * rest of its group: Alertmanager does not retry a 4xx, so a 400 would lose them all. A body
   * with no valid alert at all is still a 400.
   */
  skipped: SkippedAlert[];
}

export interface SkippedAlert {
  index: number;
  reason: string;
}

export interface ParseAlertmanagerOptions {
  /** ISO time the webhook arrived; used when an alert has no usable `startsAt`. */
  receivedAt?: string;
  /** Longest label or annotation value kept, in characters (default {@link DEFAULT_FIELD_LIMIT}). */
  fieldLimit?: number;
  /** `Incident.source` of the result: Grafana sends the same alert shape (default `alertmanager`). */
  source?: string;
  /** How identities are derived (the team's `identity.labels`). */
  identity?: IdentityOptions;
  /** Which hosts the cards' links may point to (`links.allowed_hosts`); unset = any host. */
  links?: LinkPolicy;
}

/** 8 KiB of text is a long description; anything longer is a dump, and costs every later step. */
export const DEFAULT_FIELD_LIMIT = 8192;

/**
 * Cut every value of `map` to `limit` characters with a visible marker, recording each cut.
 * Keys are capped too: a label *name* is as attacker-controlled as its value.
 */
function capFields(map: Record<string, string>, limit: number, alert: number, kind: string, out: TruncatedField[]): Record<string, string> {
  const capped: Record<string, string> = {};
  for (const [rawKey, value] of Object.entries(map)) {
    const key = rawKey.length > 256 ? rawKey.slice(0, 256) : rawKey;
    if (key !== rawKey) out.push({ alert, field: `${kind} name ${key.slice(0, 40)}…`, length: rawKey.length });
    if (value.length > limit) {
      capped[key] = `${value.slice(0, limit)}… [truncated ${value.length - limit} characters]`;
      out.push({ alert, field: `${kind}.${key.slice(0, 100)}`, length: value.length });
    } else capped[key] = value;
  }
  return capped;
}

const SEVERITY_ALIASES: Readonly<Record<string, Severity>> = {
  critical: 'critical',
  crit: 'critical',
  page: 'critical',
  error: 'critical',
  fatal: 'critical',
  emergency: 'critical',
  warning: 'warning',
  warn: 'warning',
  info: 'info',
  informational: 'info',
  notice: 'info',
  none: 'none',
};

/** Map a `severity` label onto our four levels; unknown or missing → `warning`. */
export function normalizeSeverity(raw: string | undefined): Severity {
  return SEVERITY_ALIASES[(raw ?? '').trim().toLowerCase()] ?? 'warning';
}

function toIso(s: string | null | undefined): string | undefined {
  if (!s || s.startsWith(ZERO_TIME_PREFIX)) return undefined;
  return new Date(s).toISOString();
}

function firstNonEmpty(...values: Array<string | undefined>): string {
  for (const v of values) {
    const t = v?.trim();
    if (t) return t;
  }
  return '';
}

/** Grafana's `values` (`{"B": 44.2394, "C": 1}` → `B=44.2394, C=1`), else its `valueString`, bounded. */
function valueText(values: AlertmanagerAlert['values'], valueString: string | undefined): string | undefined {
  const cap = (t: string): string => (t.length > VALUE_LIMIT ? `${t.slice(0, VALUE_LIMIT - 1)}…` : t);
  const parts = Object.entries(values ?? {})
    .slice(0, 20)
    .map(([k, v]) => `${k.slice(0, 64)}=${typeof v === 'number' ? String(Number.isInteger(v) ? v : Number(v.toPrecision(6))) : String(v).slice(0, 100)}`);
  if (parts.length > 0) return cap(parts.join(', '));
  const s = valueString?.trim();
  return s ? cap(s) : undefined;
}

/** Longest value line kept: a query result, not a dump. */
const VALUE_LIMIT = 500;

/** What every alert of one webhook call shares. */
interface BatchContext {
  receivedAt: string | undefined;
  limit: number;
  truncated: TruncatedField[];
  options: ParseAlertmanagerOptions;
  alertmanagerUrl: string | undefined;
  groupKey: string | undefined;
  group: AlertGroup | undefined;
}

function toIncident(alert: AlertmanagerAlert, index: number, ctx: BatchContext): Incident {
  const { receivedAt, limit, truncated, options } = ctx;
  const labels = capFields(alert.labels, limit, index, 'label', truncated);
  const alertname = labels['alertname'] ?? alert.labels.alertname;
  const annotations = capFields(alert.annotations ?? {}, limit, index, 'annotation', truncated);
  const sourceStart = toIso(alert.startsAt);
  const startsAt = sourceStart ?? receivedAt;
  if (!startsAt) {
    throw new RepriseError('invalid_payload', `alerts[${index}].startsAt is required`);
  }
  const summary = firstNonEmpty(annotations.summary);
  const { workload, triggerKey, basis, labels: identityLabels } = deriveIdentity(alertname, labels, options.identity);
  const incident: Incident = {
    source: options.source ?? 'alertmanager',
    status: alert.status,
    fingerprint: firstNonEmpty(alert.fingerprint) || incidentFingerprint(alertname, labels),
    triggerKey,
    alertname,
    title: summary || alertname,
    message: firstNonEmpty(annotations.description, annotations.message, summary),
    severity: normalizeSeverity(labels.severity),
    labels,
    annotations,
    startsAt,
    identity: { basis, labels: identityLabels },
  };
  if (sourceStart === undefined) incident.startsAtEstimated = true;
  const endsAt = toIso(alert.endsAt);
  if (endsAt) incident.endsAt = endsAt;
  if (workload) incident.workload = workload;
  // Written without a scheme (`runbooks.example.org/x`), a runbook_url is still an address.
  const runbookUrl = firstNonEmpty(annotations.runbook_url);
  if (runbookUrl) incident.runbookUrl = withScheme(runbookUrl);
  const generatorUrl = firstNonEmpty(alert.generatorURL);
  if (generatorUrl) incident.generatorUrl = generatorUrl;
  if (ctx.alertmanagerUrl) incident.alertmanagerUrl = ctx.alertmanagerUrl;
  if (ctx.groupKey) incident.groupKey = ctx.groupKey;
  if (ctx.group) incident.group = ctx.group;
  const value = valueText(alert.values, alert.valueString);
  if (value) incident.value = value;
  attachLinks(incident, options.links, { dashboard: alert.dashboardURL, panel: alert.panelURL, silence: alert.silenceURL, image: alert.imageURL });
  return incident;
}

/** Alerts validated between two yields to the event loop. */
const CHUNK = 256;

function invalid(issues: readonly z.core.$ZodIssue[]): RepriseError {
  const message = formatIssues(issues);
  return new RepriseError('invalid_payload', message, {
    userMessage: message,
    details: issues.map(({ path, code, message: m }) => ({ path, code, message: m })),
  });
}

/**
 * The parse, as steps: it pauses (yields) after every {@link CHUNK} alerts, so a caller on the
 * event loop can let other requests through while a 10,000-alert group is validated.
 */
function* parseSteps(body: unknown, options: ParseAlertmanagerOptions): Generator<void, AlertmanagerBatch> {
  const envelope = envelopeSchema.safeParse(body, { reportInput: true });
  if (!envelope.success) throw invalid(envelope.error.issues);
  const { alerts: raw, groupKey, receiver, externalURL, groupLabels, commonLabels, truncatedAlerts } = envelope.data;
  const alerts: Array<{ index: number; alert: AlertmanagerAlert }> = [];
  const issues: z.core.$ZodIssue[] = [];
  const skipped: SkippedAlert[] = [];
  let firstUnusable: RepriseError | undefined;
  for (let i = 0; i < raw.length; i++) {
    if (i > 0 && i % CHUNK === 0) yield;
    const a = alertSchema.safeParse(raw[i], { reportInput: true });
    if (a.success) {
      alerts.push({ index: i, alert: a.data });
      continue;
    }
    const mine = a.error.issues.map((issue) => ({ ...issue, path: ['alerts', i, ...issue.path] }));
    skipped.push({ index: i, reason: formatIssues(mine.slice(0, 5)) });
    if (issues.length < 20) issues.push(...mine);
  }
  const truncated: TruncatedField[] = [];
  const limit = options.fieldLimit ?? DEFAULT_FIELD_LIMIT;
  const am = externalURL?.trim();
  let group: AlertGroup | undefined;
  if (groupLabels || commonLabels || truncatedAlerts !== undefined) {
    // Copies of labels the alerts carry: capped the same way, but a cut is reported once, on the alert.
    const copies: TruncatedField[] = [];
    group = {
      labels: capFields(groupLabels ?? {}, limit, -1, 'groupLabels', copies),
      commonLabels: capFields(commonLabels ?? {}, limit, -1, 'commonLabels', copies),
      truncatedAlerts: truncatedAlerts ?? 0,
    };
    if (receiver !== undefined) group.receiver = receiver.slice(0, 256);
  }
  const ctx: BatchContext = {
    receivedAt: options.receivedAt,
    limit,
    truncated,
    options,
    // Only an Alertmanager's externalURL is an Alertmanager (Grafana's is Grafana's own).
    alertmanagerUrl: am && (options.source ?? 'alertmanager') === 'alertmanager' && /^https?:\/\//i.test(am) ? am : undefined,
    groupKey: groupKey ? groupKey.slice(0, 1024) : undefined,
    group,
  };
  const incidents: Incident[] = [];
  const refusedLinks: AlertmanagerBatch['refusedLinks'] = [];
  for (let n = 0; n < alerts.length; n++) {
    if (n > 0 && n % CHUNK === 0) yield;
    const { index, alert } = alerts[n]!;
    try {
      const incident = toIncident(alert, index, ctx);
      incidents.push(incident);
      for (const r of incident.refusedLinks ?? []) refusedLinks.push({ alert: index, ...r });
    } catch (err) {
      if (!(err instanceof RepriseError)) throw err;
      skipped.push({ index, reason: err.message });
      firstUnusable ??= err;
    }
  }
  // Nothing usable: the sender's payload is wrong as a whole, and saying so (400) is the fix.
  if (incidents.length === 0 && issues.length > 0) throw invalid(issues);
  if (incidents.length === 0 && firstUnusable) throw firstUnusable;
  skipped.sort((a, b) => a.index - b.index);
  const batch: AlertmanagerBatch = { incidents, truncated, skipped, refusedLinks };
  if (group) batch.group = group;
  if (groupKey !== undefined) batch.groupKey = groupKey;
  if (receiver !== undefined) batch.receiver = receiver;
  if (externalURL !== undefined) batch.externalURL = externalURL;
  return batch;
}

/**
 * Validate an Alertmanager v4 webhook body and turn each alert into its own Incident.
 * @throws RepriseError `invalid_payload` whose message names each bad field, e.g.
 *   `alerts[2].status must be "firing" or "resolved", got "pending"`.
 */
export function parseAlertmanagerPayload(body: unknown, options: ParseAlertmanagerOptions = {}): AlertmanagerBatch {
  const steps = parseSteps(body, options);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** {@link parseAlertmanagerPayload}, letting the event loop run between chunks of alerts. */
export async function parseAlertmanagerPayloadYielding(body: unknown, options: ParseAlertmanagerOptions = {}): Promise<AlertmanagerBatch> {
  const steps = parseSteps(body, options);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * Alertmanager v4 webhook → Incidents (SPEC §4). Lenient where Alertmanager itself is
 * (missing annotations, version, extra fields), strict where identity depends on it.
 */
import { z } from 'zod';
import { RepriseError } from './errors.js';
import { formatIssues } from './format-issues.js';
import { deriveWorkload, incidentFingerprint, triggerKey } from './identity.js';
import type { Incident, Severity } from './types.js';

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
});

const payloadSchema = z.object({
  version: z.unknown().optional(),
  groupKey: looseString,
  status: looseString,
  receiver: looseString,
  externalURL: looseString,
  alerts: z.array(alertSchema).min(1),
});

export type AlertmanagerAlert = z.infer<typeof alertSchema>;

/** The incidents of one webhook call plus the group context, for logs. */
export interface AlertmanagerBatch {
  incidents: Incident[];
  groupKey?: string;
  receiver?: string;
  externalURL?: string;
}

export interface ParseAlertmanagerOptions {
  /** ISO time the webhook arrived; used when an alert has no usable `startsAt`. */
  receivedAt?: string;
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

function toIncident(alert: AlertmanagerAlert, index: number, receivedAt: string | undefined): Incident {
  const labels: Record<string, string> = { ...alert.labels };
  const alertname = alert.labels.alertname;
  const annotations: Record<string, string> = { ...(alert.annotations ?? {}) };
  const startsAt = toIso(alert.startsAt) ?? receivedAt;
  if (!startsAt) {
    throw new RepriseError('invalid_payload', `alerts[${index}].startsAt is required`);
  }
  const summary = firstNonEmpty(annotations.summary);
  const workload = deriveWorkload(labels);
  const incident: Incident = {
    source: 'alertmanager',
    status: alert.status,
    fingerprint: firstNonEmpty(alert.fingerprint) || incidentFingerprint(alertname, labels),
    triggerKey: triggerKey(alertname, workload),
    alertname,
    title: summary || alertname,
    message: firstNonEmpty(annotations.description, annotations.message, summary),
    severity: normalizeSeverity(labels.severity),
    labels,
    annotations,
    startsAt,
  };
  const endsAt = toIso(alert.endsAt);
  if (endsAt) incident.endsAt = endsAt;
  if (workload) incident.workload = workload;
  const runbookUrl = firstNonEmpty(annotations.runbook_url);
  if (runbookUrl) incident.runbookUrl = runbookUrl;
  const generatorUrl = firstNonEmpty(alert.generatorURL);
  if (generatorUrl) incident.generatorUrl = generatorUrl;
  return incident;
}

/**
 * Validate an Alertmanager v4 webhook body and turn each alert into its own Incident.
 * @throws RepriseError `invalid_payload` whose message names each bad field, e.g.
 *   `alerts[2].status must be "firing" or "resolved", got "pending"`.
 */
export function parseAlertmanagerPayload(body: unknown, options: ParseAlertmanagerOptions = {}): AlertmanagerBatch {
  const parsed = payloadSchema.safeParse(body, { reportInput: true });
  if (!parsed.success) {
    const message = formatIssues(parsed.error.issues);
    throw new RepriseError('invalid_payload', message, {
      userMessage: message,
      details: parsed.error.issues.map(({ path, code, message: m }) => ({ path, code, message: m })),
    });
  }
  const { alerts, groupKey, receiver, externalURL } = parsed.data;
  const incidents = alerts.map((a, i) => toIncident(a, i, options.receivedAt));
  const batch: AlertmanagerBatch = { incidents };
  if (groupKey !== undefined) batch.groupKey = groupKey;
  if (receiver !== undefined) batch.receiver = receiver;
  if (externalURL !== undefined) batch.externalURL = externalURL;
  return batch;
}

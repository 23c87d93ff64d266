/**
 * Grafana unified alerting's webhook contact point → Incidents (SPEC §4). Grafana sends
 * Alertmanager's notification (`alerts`, `groupKey`, `groupLabels`, `commonLabels`,
 * `truncatedAlerts`) plus, per alert, `dashboardURL`, `panelURL`, `silenceURL`, `imageURL`,
 * `values` / `valueString`, and per notification `title`, `message`, `state`, `orgId` — the
 * shape of "Configure the webhook notifier for Alerting" in Grafana's documentation. The alerts go
 * through the Alertmanager parser: the same validation, field limits, identity and link checks.
 *
 * A contact point's **Test** button sends one made-up alert: `TestAlert` on `instance=Grafana`
 * ("Notification test"), or the custom labels the user typed — possibly none at all. That is
 * acknowledged (202) with the reason and recorded nowhere: an open nothing would ever resolve
 * would sit in the ledger, and a team's first click on Test must not read as an error.
 */
import {
  DEFAULT_FIELD_LIMIT,
  parseAlertmanagerPayload,
  parseAlertmanagerPayloadYielding,
  type AlertmanagerBatch,
  type ParseAlertmanagerOptions,
} from './alertmanager.js';
import type { Incident } from './types.js';

/** What a Grafana webhook call gave. */
export interface GrafanaBatch extends AlertmanagerBatch {
  /** Set when the body was Grafana's contact-point test notification; then there are no incidents. */
  test?: GrafanaTestNotification;
}

export interface GrafanaTestNotification {
  /** Why nothing was recorded, for the 202 and the log. */
  reason: string;
  /** The contact point tested (`receiver`). */
  receiver?: string;
  /** Grafana's `title` of the test (`[FIRING:1]  (TestAlert Grafana)`). */
  title?: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

/** Labels only a real Grafana-managed alert carries (every rule has a folder and a uid). */
const RULE_LABELS = ['alertname', 'grafana_folder', '__alert_rule_uid__'];

/** Grafana's predefined test alert: exactly `alertname=TestAlert, instance=Grafana`. */
function isPredefinedTest(labels: Json): boolean {
  const keys = Object.keys(labels);
  return keys.length === 2 && labels['alertname'] === 'TestAlert' && labels['instance'] === 'Grafana';
}

/**
 * The test notification, recognised: every alert is well formed but is Grafana's predefined
 * test alert or names no rule at all (no `alertname`, `grafana_folder`, `__alert_rule_uid__`:
 * a custom test whose labels were cleared). Anything else is parsed as alerts.
 */
export function grafanaTestNotification(body: unknown): GrafanaTestNotification | undefined {
  if (!isObject(body) || !Array.isArray(body['alerts']) || body['alerts'].length === 0) return undefined;
  for (const a of body['alerts'] as unknown[]) {
    if (!isObject(a) || (a['status'] !== 'firing' && a['status'] !== 'resolved') || !isObject(a['labels'])) return undefined;
    const labels = a['labels'];
    if (!isPredefinedTest(labels) && RULE_LABELS.some((k) => k in labels)) return undefined;
  }
  const test: GrafanaTestNotification = { reason: 'Grafana contact-point test notification: Reprise is reachable; nothing was recorded' };
  const receiver = str(body['receiver']);
  const title = str(body['title']);
  if (receiver) test.receiver = receiver.slice(0, 256);
  if (title) test.title = title.replace(/\s+/g, ' ').trim().slice(0, 300);
  return test;
}

/** Longest summary taken from the notification's `title`. */
const TITLE_LIMIT = 300;

/**
 * An alert that carries no summary or description of its own says what the notification's
 * `title` / `message` say (a contact point's templates often write the text there).
 */
function fallBackOnNotificationText(incidents: Incident[], body: unknown, fieldLimit: number | undefined): void {
  if (!isObject(body)) return;
  const title = str(body['title'])?.replace(/\s+/g, ' ').trim();
  const message = str(body['message'])?.replace(/\r/g, '').trim();
  if (!title && !message) return;
  const limit = fieldLimit ?? DEFAULT_FIELD_LIMIT;
  for (const i of incidents) {
    const a = i.annotations;
    if ([a['summary'], a['description'], a['message']].some((v) => v !== undefined && v.trim() !== '')) continue;
    if (title) i.title = title.length > TITLE_LIMIT ? `${title.slice(0, TITLE_LIMIT - 1)}…` : title;
    if (message) i.message = message.length > limit ? `${message.slice(0, limit)}… [truncated ${message.length - limit} characters]` : message;
  }
}

function empty(test: GrafanaTestNotification): GrafanaBatch {
  return { incidents: [], truncated: [], skipped: [], refusedLinks: [], test };
}

/**
 * Validate a Grafana webhook body: the test notification is recognised, anything else is an
 * Alertmanager-shaped notification whose incidents have source `grafana`.
 * @throws RepriseError `invalid_payload` naming each bad field (as the Alertmanager parser).
 */
export function parseGrafanaPayload(body: unknown, options: ParseAlertmanagerOptions = {}): GrafanaBatch {
  const test = grafanaTestNotification(body);
  if (test) return empty(test);
  const batch = parseAlertmanagerPayload(body, { ...options, source: 'grafana' });
  fallBackOnNotificationText(batch.incidents, body, options.fieldLimit);
  return batch;
}

/** {@link parseGrafanaPayload}, letting the event loop run between chunks of alerts. */
export async function parseGrafanaPayloadYielding(body: unknown, options: ParseAlertmanagerOptions = {}): Promise<GrafanaBatch> {
  const test = grafanaTestNotification(body);
  if (test) return empty(test);
  const batch = await parseAlertmanagerPayloadYielding(body, { ...options, source: 'grafana' });
  fallBackOnNotificationText(batch.incidents, body, options.fieldLimit);
  return batch;
}

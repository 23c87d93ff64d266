/**
 * PagerDuty V3 webhook → Incident (SPEC §4). `incident.triggered` opens, `incident.resolved`
 * resolves, `incident.reopened` fires again, marked `reopened` and starting when it reopened (a
 * new episode of the same trigger, in the thread the incident already has: bot/reopen-flow.ts);
 * `incident.acknowledged` is someone on it and `incident.annotated` an operator note (issue 21);
 * every other event type is acknowledged and ignored with a reason. The PagerDuty incident id is
 * the fingerprint, so a resolve pairs with its open even when the incident's title changed.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { attachLinks, type LinkPolicy } from './alert-links.js';
import { DEFAULT_FIELD_LIMIT } from './alertmanager.js';
import { RepriseError } from './errors.js';
import { formatIssues } from './format-issues.js';
import { deriveIdentity, type IdentityOptions } from './identity.js';
import type { Incident, Severity } from './types.js';

const looseString = z.string().optional().catch(undefined);
const reference = z.object({ id: looseString, summary: looseString, html_url: looseString }).nullish().catch(undefined);

const dataSchema = z.object({
  id: z.string().trim().min(1).max(256),
  type: looseString,
  title: looseString,
  html_url: looseString,
  number: z.number().optional().catch(undefined),
  status: looseString,
  incident_key: looseString,
  created_at: looseString,
  urgency: looseString,
  service: reference,
  priority: reference,
  escalation_policy: reference,
});

const eventSchema = z.object({
  event: z.object({
    id: looseString,
    event_type: z.string().trim().min(1).max(200),
    resource_type: looseString,
    occurred_at: looseString,
    agent: reference,
    data: z.unknown().optional(),
  }),
});

/** `incident.annotated`'s data: the note and the incident it is on. */
const noteSchema = z.object({
  content: z.string().max(1_000_000),
  incident: z.object({ id: z.string().trim().min(1).max(256) }),
});

/** Who did it in PagerDuty (`event.agent`), as text. */
export interface PagerDutyAgent {
  id?: string;
  name?: string;
}

/** Envelope fields every parse returns: the edge's replay protection reads the id and `occurred_at`. */
interface PagerDutyEnvelope {
  eventType: string;
  eventId?: string;
  /** `event.occurred_at` as sent (the edge checks its age). */
  occurredAt?: string;
}
export type PagerDutyParse = (
  | { kind: 'incident'; incident: Incident }
  | { kind: 'ack'; incidentId: string; agent?: PagerDutyAgent }
  | { kind: 'note'; incidentId: string; text: string; agent?: PagerDutyAgent }
  | { kind: 'ignored'; reason: string }
) &
  PagerDutyEnvelope;

const STATUS: Readonly<Record<string, 'firing' | 'resolved'>> = {
  'incident.triggered': 'firing',
  'incident.reopened': 'firing',
  'incident.resolved': 'resolved',
};

function invalid(issues: readonly z.core.$ZodIssue[], prefix: Array<string | number> = []): RepriseError {
  const full = issues.map((i) => ({ ...i, path: [...prefix, ...i.path] }));
  const message = formatIssues(full);
  return new RepriseError('invalid_payload', message, {
    userMessage: message,
    details: full.map(({ path, code, message: m }) => ({ path, code, message: m })),
  });
}

const cap = (s: string, limit: number): string => (s.length > limit ? `${s.slice(0, limit)}… [truncated ${s.length - limit} characters]` : s);
const iso = (s: string | undefined): string | undefined => (s && !Number.isNaN(Date.parse(s)) ? new Date(s).toISOString() : undefined);

function severityOf(priority: string | undefined, urgency: string | undefined): Severity {
  if (priority && /^p[12]$/i.test(priority.trim())) return 'critical';
  if (urgency === 'high') return 'critical';
  if (urgency === 'low') return 'warning';
  return 'warning';
}

/**
 * Validate a PagerDuty V3 webhook body (already signature-checked).
 * @throws RepriseError `invalid_payload` naming each bad field.
 */
export function parsePagerDutyPayload(
  body: unknown,
  options: { receivedAt?: string; fieldLimit?: number; identity?: IdentityOptions; links?: LinkPolicy } = {},
): PagerDutyParse {
  const env = eventSchema.safeParse(body, { reportInput: true });
  if (!env.success) throw invalid(env.error.issues);
  const { event } = env.data;
  const base: PagerDutyEnvelope = {
    eventType: event.event_type,
    ...(event.id ? { eventId: event.id } : {}),
    ...(event.occurred_at ? { occurredAt: event.occurred_at } : {}),
  };
  const agent = agentOf(event.agent);
  if (event.event_type === 'incident.acknowledged') {
    const parsed = dataSchema.safeParse(event.data, { reportInput: true });
    if (!parsed.success) throw invalid(parsed.error.issues, ['event', 'data']);
    return { kind: 'ack', incidentId: parsed.data.id, ...(agent ? { agent } : {}), ...base };
  }
  if (event.event_type === 'incident.annotated') {
    const parsed = noteSchema.safeParse(event.data, { reportInput: true });
    if (!parsed.success) throw invalid(parsed.error.issues, ['event', 'data']);
    return { kind: 'note', incidentId: parsed.data.incident.id, text: parsed.data.content, ...(agent ? { agent } : {}), ...base };
  }
  const status = STATUS[event.event_type];
  if (!status)
    return {
      kind: 'ignored',
      reason: `event type ${event.event_type.slice(0, 100)} is not incident.triggered, .reopened, .acknowledged, .annotated or .resolved`,
      ...base,
    };
  const parsed = dataSchema.safeParse(event.data, { reportInput: true });
  if (!parsed.success) throw invalid(parsed.error.issues, ['event', 'data']);
  const d = parsed.data;
  const reopened = event.event_type === 'incident.reopened';
  // A reopen starts a new episode when it happened (its created_at is the first trigger's).
  const startsAt = (reopened ? (iso(event.occurred_at) ?? options.receivedAt) : undefined) ?? iso(d.created_at) ?? iso(event.occurred_at) ?? options.receivedAt;
  if (!startsAt) throw new RepriseError('invalid_payload', 'event.data.created_at is required', { userMessage: 'event.data.created_at is required' });
  const endsAt = status === 'resolved' ? iso(event.occurred_at) : undefined;
  const incident = pagerDutyIncident(d, { status, startsAt, ...(endsAt ? { endsAt } : {}) }, options);
  if (!iso(d.created_at) && !iso(event.occurred_at)) incident.startsAtEstimated = true;
  if (reopened) incident.reopened = true;
  return { kind: 'incident', incident, ...base };
}

/** A PagerDuty incident object: the webhook's `event.data`, or an element of REST `GET /incidents`. */
export type PagerDutyIncidentData = z.infer<typeof dataSchema>;

/** Reads a REST incident object as the webhook's `event.data` is read; undefined when it has no id. */
export function readPagerDutyIncident(value: unknown): PagerDutyIncidentData | undefined {
  const parsed = dataSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The Incident a PagerDuty incident is — its labels, severity and identity, so its trigger key —
 * the one function the webhook and `reprise import pagerduty` both key incidents with: a fix
 * imported from PagerDuty's history lands on the trigger the live path opens.
 */
export function pagerDutyIncident(
  d: PagerDutyIncidentData,
  when: { status: 'firing' | 'resolved'; startsAt: string; endsAt?: string },
  options: { fieldLimit?: number; identity?: IdentityOptions; links?: LinkPolicy } = {},
): Incident {
  const limit = options.fieldLimit ?? DEFAULT_FIELD_LIMIT;
  const title = cap(d.title?.trim() || `PagerDuty incident ${d.id}`, limit);
  const alertname = title.slice(0, 200);
  const labels: Record<string, string> = { alertname, pagerduty_incident: d.id };
  if (d.service?.summary) labels['service'] = cap(d.service.summary, 256);
  // The service id is the identity: a service's name can change, its id does not.
  if (d.service?.id) labels['pagerduty_service'] = cap(d.service.id, 256);
  if (d.urgency) labels['urgency'] = cap(d.urgency, 64);
  if (d.priority?.summary) labels['priority'] = cap(d.priority.summary, 64);
  if (d.incident_key) labels['incident_key'] = cap(d.incident_key, 256);
  const severity = severityOf(d.priority?.summary, d.urgency);
  labels['severity'] = severity;
  const { workload, triggerKey, basis, labels: identityLabels } = deriveIdentity(alertname, labels, options.identity);
  const incident: Incident = {
    source: 'pagerduty',
    status: when.status,
    fingerprint: `pagerduty:${d.id}`,
    triggerKey,
    alertname,
    title,
    message: title,
    severity,
    labels,
    annotations: {},
    startsAt: when.startsAt,
    identity: { basis, labels: identityLabels },
  };
  if (when.endsAt) incident.endsAt = when.endsAt;
  if (workload) incident.workload = workload;
  if (d.html_url && /^https?:\/\//i.test(d.html_url)) incident.generatorUrl = d.html_url.slice(0, 2048);
  attachLinks(incident, options.links);
  return incident;
}

function agentOf(a: { id?: string | undefined; summary?: string | undefined } | null | undefined): PagerDutyAgent | undefined {
  const id = a?.id?.trim().slice(0, 100);
  const name = a?.summary?.trim().slice(0, 200);
  if (!id && !name) return undefined;
  return { ...(id ? { id } : {}), ...(name ? { name } : {}) };
}

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/** The `v1=` signature PagerDuty sends for `body` signed with `secret`. */
export function pagerDutySignature(secret: string, body: Uint8Array | string): string {
  return `v1=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * `X-PagerDuty-Signature: v1=<hex>[,v1=<hex>…]` (several while a secret rotates): valid when
 * any v1 signature matches the HMAC-SHA256 of the raw body. Compared in constant time.
 */
export function verifyPagerDutySignature(secret: string, body: Uint8Array, header: string | undefined): SignatureCheck {
  if (!header || header.trim() === '') return { ok: false, reason: 'missing X-PagerDuty-Signature header' };
  const expected = Buffer.from(pagerDutySignature(secret, body));
  const given = header
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('v1='))
    .slice(0, 16);
  if (given.length === 0) return { ok: false, reason: 'X-PagerDuty-Signature has no v1 signature' };
  let match = false;
  for (const g of given) {
    const b = Buffer.from(g);
    if (b.length === expected.length && timingSafeEqual(b, expected)) match = true;
  }
  return match ? { ok: true } : { ok: false, reason: 'X-PagerDuty-Signature does not match the body' };
}

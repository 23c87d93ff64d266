/**
 * A generic JSON webhook (`POST /webhook/generic/<name>`, SPEC §4): config maps dot-paths of the
 * sender's body onto an Alertmanager-shaped alert, which then goes through the Alertmanager
 * parser — the same validation, field limits and identity as every other source.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { parseAlertmanagerPayloadYielding, type AlertmanagerBatch, type ParseAlertmanagerOptions } from './alertmanager.js';
import { RepriseError } from './errors.js';

export interface GenericMapping {
  /** Dot-path of an array of alerts; absent = the whole body is one alert. Other paths are relative to an alert. */
  alerts?: string;
  alertname: string;
  status?: string;
  /** Status values that mean resolved (compared lower-case). */
  resolved_values: string[];
  fingerprint?: string;
  title?: string;
  message?: string;
  severity?: string;
  starts_at?: string;
  ends_at?: string;
  /** Label name → dot-path. */
  labels: Record<string, string>;
}

/** `a.b.0.c` → body.a.b[0].c; undefined when any step is missing. */
export function getPath(value: unknown, path: string): unknown {
  let cur: unknown = value;
  for (const key of path.split('.')) {
    if (key === '') continue;
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined);

export async function parseGenericPayload(body: unknown, mapping: GenericMapping, options: ParseAlertmanagerOptions): Promise<AlertmanagerBatch> {
  const list = mapping.alerts ? getPath(body, mapping.alerts) : [body];
  if (!Array.isArray(list))
    throw new RepriseError('invalid_payload', `${mapping.alerts} must be an array of alerts`, { userMessage: `${mapping.alerts} must be an array of alerts` });
  const resolved = new Set(mapping.resolved_values.map((v) => v.toLowerCase()));
  const alerts = list.map((a) => {
    const labels: Record<string, unknown> = {};
    for (const [name, path] of Object.entries(mapping.labels)) {
      const v = text(getPath(a, path));
      if (v !== undefined) labels[name] = v;
    }
    labels['alertname'] = text(getPath(a, mapping.alertname));
    const severity = mapping.severity ? text(getPath(a, mapping.severity)) : undefined;
    if (severity !== undefined) labels['severity'] = severity;
    const status = mapping.status ? text(getPath(a, mapping.status)) : undefined;
    const annotations: Record<string, string> = {};
    const title = mapping.title ? text(getPath(a, mapping.title)) : undefined;
    const message = mapping.message ? text(getPath(a, mapping.message)) : undefined;
    if (title !== undefined) annotations['summary'] = title;
    if (message !== undefined) annotations['description'] = message;
    const alert: Record<string, unknown> = { status: status !== undefined && resolved.has(status.toLowerCase()) ? 'resolved' : 'firing', labels, annotations };
    const fp = mapping.fingerprint ? text(getPath(a, mapping.fingerprint)) : undefined;
    if (fp !== undefined) alert['fingerprint'] = fp;
    const startsAt = mapping.starts_at ? text(getPath(a, mapping.starts_at)) : undefined;
    if (startsAt !== undefined) alert['startsAt'] = startsAt;
    const endsAt = mapping.ends_at ? text(getPath(a, mapping.ends_at)) : undefined;
    if (endsAt !== undefined) alert['endsAt'] = endsAt;
    return alert;
  });
  return parseAlertmanagerPayloadYielding({ alerts }, options);
}

/**
 * Hex HMAC-SHA256 of the raw body, optionally prefixed `sha256=` (GitHub style) by the sender.
 * With a signed timestamp (`timestamp_header`), the signed bytes are `<timestamp>.<raw body>`,
 * so the timestamp cannot be changed without the secret.
 */
export function genericSignature(secret: string, body: Uint8Array | string, timestamp?: string): string {
  const mac = createHmac('sha256', secret);
  if (timestamp !== undefined) mac.update(`${timestamp}.`);
  return mac.update(body).digest('hex');
}

export function verifyGenericSignature(
  secret: string,
  body: Uint8Array,
  header: string | undefined,
  headerName: string,
  timestamp?: string,
): { ok: true } | { ok: false; reason: string } {
  if (!header || header.trim() === '') return { ok: false, reason: `missing ${headerName} header` };
  const given = Buffer.from(
    header
      .trim()
      .replace(/^sha256=/i, '')
      .toLowerCase(),
  );
  const expected = Buffer.from(genericSignature(secret, body, timestamp));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: `${headerName} does not match the body` };
  return { ok: true };
}

/**
 * One JSON GET of an on-call provider's API, with the provider's failures turned into the words a
 * card shows ("PagerDuty answered 401", "Grafana OnCall unreachable: …"): a provider that fails
 * never throws past its adapter. The token is masked in every message (an error body may echo
 * the request's `Authorization`).
 */
import { createRedactor } from '../../core/redact.js';

export type Fetched = { ok: true; body: unknown } | { ok: false; reason: string };

export interface ProviderHttp {
  /** Named in reasons: `PagerDuty`, `Grafana OnCall`. */
  label: string;
  headers: Record<string, string>;
  token: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

/** Largest answer read (a schedule, a page of on-calls): past it the answer is refused as garbage. */
const MAX_BODY = 1_000_000;

export async function getJson(http: ProviderHttp, url: string, signal?: AbortSignal): Promise<Fetched> {
  const redact = createRedactor([http.token]).text;
  const timeout = AbortSignal.timeout(http.timeoutMs);
  let res: Response;
  try {
    res = await (http.fetch ?? fetch)(url, { headers: http.headers, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  } catch (err) {
    const e = err as Error;
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return { ok: false, reason: `${http.label} did not answer in time` };
    return { ok: false, reason: `${http.label} unreachable: ${redact(e.message).slice(0, 120)}` };
  }
  const text = await res.text().catch(() => '');
  if (!res.ok) return { ok: false, reason: `${http.label} answered ${res.status}` };
  if (text.length > MAX_BODY) return { ok: false, reason: `${http.label} answered with more than ${MAX_BODY} bytes` };
  try {
    return { ok: true, body: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, reason: `${http.label} answered with something that is not JSON` };
  }
}

/** A string field of an unknown object, bounded; undefined when absent or not a string. */
export function field(o: unknown, key: string, max = 200): string | undefined {
  if (typeof o !== 'object' || o === null) return undefined;
  const v = (o as Record<string, unknown>)[key];
  return typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, max) : undefined;
}

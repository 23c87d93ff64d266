/**
 * PagerDuty as the on-call provider: `GET /oncalls?escalation_policy_ids[]=…&earliest=true`
 * (with the users included, for their names and emails), the first escalation level's people,
 * until the earliest of their shifts ends. The escalation policy is the route's (configured), or
 * the one of the incident's PagerDuty service (`GET /services/{id}`, remembered per service).
 */
import type { OnCallAnswer, OnCallPerson, OnCallProvider, OnCallQuery } from '../../ports/oncall.js';
import { field, getJson, type ProviderHttp } from './provider-fetch.js';

export interface PagerDutyOnCallOptions {
  apiUrl: string;
  token: string;
  timeoutMs: number;
  /** Escalation policy per on-call route; a route without one uses the incident's service. */
  policies: Record<string, string | undefined>;
  fetch?: typeof fetch;
}

/** Services whose escalation policy is remembered (a service rarely changes policy; a restart forgets). */
const MAX_SERVICES = 500;

export function pagerDutyOnCall(opts: PagerDutyOnCallOptions): OnCallProvider {
  const base = opts.apiUrl.replace(/\/+$/, '');
  const http: ProviderHttp = {
    label: 'PagerDuty',
    token: opts.token,
    timeoutMs: opts.timeoutMs,
    headers: { Accept: 'application/vnd.pagerduty+json;version=2', Authorization: `Token token=${opts.token}` },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  };
  const policyOfService = new Map<string, string>();
  const unknown = (reason: string): OnCallAnswer => ({ known: false, reason, source: 'pagerduty' });

  async function policyFor(q: OnCallQuery, signal?: AbortSignal): Promise<{ id: string } | { reason: string }> {
    const configured = opts.policies[q.route];
    if (configured) return { id: configured };
    if (!q.service) return { reason: 'no PagerDuty escalation policy for this route, and the alert names no PagerDuty service' };
    const known = policyOfService.get(q.service);
    if (known) return { id: known };
    const got = await getJson(http, `${base}/services/${encodeURIComponent(q.service)}`, signal);
    if (!got.ok) return { reason: got.reason };
    const policy = field((got.body as { service?: { escalation_policy?: unknown } } | null)?.service?.escalation_policy, 'id');
    if (!policy) return { reason: 'PagerDuty named no escalation policy for the service' };
    if (policyOfService.size >= MAX_SERVICES) policyOfService.clear();
    policyOfService.set(q.service, policy);
    return { id: policy };
  }

  return {
    source: 'pagerduty',
    async whoIsOnCall(q, _now, signal) {
      const policy = await policyFor(q, signal);
      if ('reason' in policy) return unknown(policy.reason);
      const url = `${base}/oncalls?escalation_policy_ids[]=${encodeURIComponent(policy.id)}&earliest=true&include[]=users`;
      const got = await getJson(http, url, signal);
      if (!got.ok) return unknown(got.reason);
      const list = (got.body as { oncalls?: unknown } | null)?.oncalls;
      if (!Array.isArray(list)) return unknown('PagerDuty answered without an on-call list');
      const entries = list
        .map((o: unknown) => {
          const rec = (o ?? {}) as { escalation_level?: unknown; user?: unknown; end?: unknown };
          const level = typeof rec.escalation_level === 'number' ? rec.escalation_level : Number.POSITIVE_INFINITY;
          const name = field(rec.user, 'name') ?? field(rec.user, 'summary');
          const end = typeof rec.end === 'string' && !Number.isNaN(Date.parse(rec.end)) ? rec.end : undefined;
          return { level, name, email: field(rec.user, 'email'), id: field(rec.user, 'id'), end };
        })
        .filter((e) => e.name !== undefined);
      if (entries.length === 0) return unknown('PagerDuty has nobody on call for the escalation policy');
      const first = Math.min(...entries.map((e) => e.level));
      const people: OnCallPerson[] = [];
      const seen = new Set<string>();
      let until: number | undefined;
      for (const e of entries) {
        if (e.level !== first) continue;
        if (e.end) until = Math.min(until ?? Number.POSITIVE_INFINITY, Date.parse(e.end));
        const key = e.id ?? e.name!;
        if (seen.has(key)) continue;
        seen.add(key);
        people.push({ name: e.name!, ...(e.email ? { email: e.email } : {}), chat: {} });
      }
      return { known: true, people: people.slice(0, 5), ...(until !== undefined ? { until: new Date(until).toISOString() } : {}), source: 'pagerduty' };
    },
  };
}

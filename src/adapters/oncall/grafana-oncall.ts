/**
 * Grafana OnCall (and Grafana IRM, the same API under its plugin URL) as the on-call provider:
 * `GET /api/v1/schedules/{id}/` → `on_call_now` (user ids), then `GET /api/v1/users/{id}/` for
 * each one's name and email. The API says no shift end: the answer is kept for the cache's TTL.
 */
import type { OnCallAnswer, OnCallPerson, OnCallProvider } from '../../ports/oncall.js';
import { field, getJson, type ProviderHttp } from './provider-fetch.js';

export interface GrafanaOnCallOptions {
  /** The OnCall API base (`https://oncall-prod-eu-west-0.grafana.net/oncall`, or IRM's plugin resources URL). */
  apiUrl: string;
  token: string;
  timeoutMs: number;
  /** Schedule id per on-call route. */
  schedules: Record<string, string | undefined>;
  fetch?: typeof fetch;
}

/** People named at most (a schedule with a crowd on call is still one line on a card). */
const MAX_PEOPLE = 5;

export function grafanaOnCall(opts: GrafanaOnCallOptions): OnCallProvider {
  const base = opts.apiUrl.replace(/\/+$/, '');
  const http: ProviderHttp = {
    label: 'Grafana OnCall',
    token: opts.token,
    timeoutMs: opts.timeoutMs,
    headers: { Accept: 'application/json', Authorization: opts.token },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  };
  const unknown = (reason: string): OnCallAnswer => ({ known: false, reason, source: 'grafana' });
  return {
    source: 'grafana',
    async whoIsOnCall(q, _now, signal) {
      const schedule = opts.schedules[q.route];
      if (!schedule) return unknown('no Grafana OnCall schedule for this route');
      const got = await getJson(http, `${base}/api/v1/schedules/${encodeURIComponent(schedule)}/`, signal);
      if (!got.ok) return unknown(got.reason);
      const now = (got.body as { on_call_now?: unknown } | null)?.on_call_now;
      if (!Array.isArray(now)) return unknown('Grafana OnCall answered without on_call_now');
      const ids = now.filter((x): x is string => typeof x === 'string' && x !== '').slice(0, MAX_PEOPLE);
      if (ids.length === 0) return unknown('Grafana OnCall has nobody on call in the schedule');
      const people: OnCallPerson[] = [];
      for (const id of ids) {
        const user = await getJson(http, `${base}/api/v1/users/${encodeURIComponent(id)}/`, signal);
        if (!user.ok) return unknown(user.reason);
        const email = field(user.body, 'email');
        const name = field(user.body, 'name') ?? field(user.body, 'username') ?? email ?? id;
        people.push({ name, ...(email ? { email } : {}), chat: {} });
      }
      return { known: true, people, source: 'grafana' };
    },
  };
}

/**
 * The on-call service `serve` (and `reprise oncall`) asks, built from `oncall` in the config
 * (issue 32): one provider per source kind (the rotation, PagerDuty, Grafana OnCall), the routes
 * in order then `default`, the people directory, and the chat surfaces that can look a person up
 * by email (Slack's `users.lookupByEmail`; a surface implementing {@link ChatIdentityLookup}).
 * Undefined when no source is configured: cards then carry no on-call line.
 */
import { grafanaOnCall } from '../adapters/oncall/grafana-oncall.js';
import { pagerDutyOnCall } from '../adapters/oncall/pagerduty-oncall.js';
import type { Config } from '../config/schema.js';
import { rotationProvider } from '../core/oncall/rotation-provider.js';
import type { Rotation } from '../core/oncall/rotation.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { ChatIdentityLookup, OnCallProvider } from '../ports/oncall.js';
import { OnCallService, type OnCallRoute, type OnCallServiceOptions } from './oncall-service.js';

type Source = Pick<Config['oncall'], 'rotation' | 'pagerduty' | 'grafana'>;

/** Whether the config names any on-call source. */
export function onCallConfigured(config: Config): boolean {
  const o = config.oncall;
  return [o, ...o.routes].some((s) => s.rotation !== undefined || s.pagerduty !== undefined || s.grafana !== undefined);
}

/** The surfaces (transports) that can find a person's id by email. */
export function identityLookups(transports: Iterable<{ name: string }>): ChatIdentityLookup[] {
  const out: ChatIdentityLookup[] = [];
  for (const t of transports) {
    const f = (t as { userIdByEmail?: unknown }).userIdByEmail;
    if (typeof f === 'function') out.push({ surface: t.name, userIdByEmail: (email) => (f as (e: string) => Promise<string | undefined>).call(t, email) });
  }
  return out;
}

export function buildOnCall(
  config: Config,
  deps: { transports: Iterable<{ name: string }>; clock: Clock; logger: Logger; fetch?: typeof fetch; onLate?: OnCallServiceOptions['onLate'] },
): OnCallService | undefined {
  if (!onCallConfigured(config)) return undefined;
  const o = config.oncall;
  const named: Array<{ name: string; source: Source; match?: OnCallRoute['match'] }> = [
    ...o.routes.map((r) => ({ name: r.name, source: r, match: r.match })),
    { name: 'default', source: o },
  ];
  const rotations: Record<string, Rotation> = {};
  const policies: Record<string, string | undefined> = {};
  const schedules: Record<string, string> = {};
  for (const n of named) {
    if (n.source.rotation) rotations[n.name] = n.source.rotation;
    if (n.source.pagerduty) policies[n.name] = n.source.pagerduty.escalation_policy;
    if (n.source.grafana) schedules[n.name] = n.source.grafana.schedule;
  }
  const fetchOpt = deps.fetch ? { fetch: deps.fetch } : {};
  const rotation = rotationProvider(rotations, o.people);
  const pagerduty: OnCallProvider | undefined = config.pagerduty.token
    ? pagerDutyOnCall({ apiUrl: config.pagerduty.api_url, token: config.pagerduty.token, timeoutMs: config.pagerduty.timeout_ms, policies, ...fetchOpt })
    : undefined;
  const grafana: OnCallProvider | undefined =
    o.grafana_url && o.grafana_token ? grafanaOnCall({ apiUrl: o.grafana_url, token: o.grafana_token, timeoutMs: 10_000, schedules, ...fetchOpt }) : undefined;
  const routes: OnCallRoute[] = named.map((n) => ({
    name: n.name,
    ...(n.match ? { match: n.match } : {}),
    provider: n.source.rotation ? rotation : n.source.pagerduty ? pagerduty : n.source.grafana ? grafana : undefined,
  }));
  const people = o.people.map((p) => {
    const chat: Record<string, string> = {};
    if (p.slack) chat['slack'] = p.slack;
    if (p.matrix) chat['matrix'] = p.matrix;
    if (p.mattermost) chat['mattermost'] = p.mattermost;
    return { name: p.name, email: p.email, chat };
  });
  return new OnCallService({
    routes,
    people,
    lookups: identityLookups(deps.transports),
    clock: deps.clock,
    logger: deps.logger.child({ component: 'oncall' }),
    budgetMs: o.timeout_ms,
    cacheMs: o.cache_ms,
    ...(deps.onLate ? { onLate: deps.onLate } : {}),
  });
}

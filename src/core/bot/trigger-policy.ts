import { globMatcher } from '../glob.js';
import type { Incident } from '../types.js';

/** One `trigger.match` / `trigger.ignore` rule: every field given must match. */
export interface TriggerRule {
  severity?: string[];
  alertname?: string;
  namespace?: string;
  labels?: Record<string, string>;
}

export interface TriggerPolicyOptions {
  match: readonly TriggerRule[];
  ignore: readonly TriggerRule[];
  /** The same fingerprint and status re-sent inside this window is dropped (0 = off). */
  dedupWindowMs: number;
}

export type Admission = { admitted: true } | { admitted: false; reason: string };

/** Most fingerprints remembered for the dedup window; the oldest are forgotten first. */
const MAX_REMEMBERED = 50_000;

/** A rule as a predicate: every field it gives must match. */
export function compileRule(rule: TriggerRule): (i: Incident) => boolean {
  const alert = rule.alertname === undefined ? undefined : globMatcher(rule.alertname);
  const ns = rule.namespace === undefined ? undefined : globMatcher(rule.namespace);
  const labels = Object.entries(rule.labels ?? {}).map(([k, g]) => [k, globMatcher(g)] as const);
  const severities = rule.severity?.map((s) => s.toLowerCase());
  return (i) =>
    (severities === undefined || severities.includes(i.severity)) &&
    (alert === undefined || alert(i.alertname)) &&
    (ns === undefined || ns(i.workload?.namespace ?? i.labels['namespace'] ?? '')) &&
    labels.every(([k, matches]) => matches(i.labels[k] ?? ''));
}

/**
 * Trigger policy (SPEC §4): `match` / `ignore` rules and the fingerprint dedup window, applied
 * before anything else. A dropped alert is reported with its reason, never silently lost.
 */
export class TriggerPolicy {
  readonly #match: Array<(i: Incident) => boolean>;
  readonly #ignore: Array<(i: Incident) => boolean>;
  readonly #window: number;
  readonly #seen = new Map<string, number>();

  constructor(opts: TriggerPolicyOptions) {
    this.#match = opts.match.map(compileRule);
    this.#ignore = opts.ignore.map(compileRule);
    this.#window = opts.dedupWindowMs;
  }

  admit(incident: Incident, now: Date): Admission {
    if (this.#match.length > 0 && !this.#match.some((m) => m(incident))) {
      return { admitted: false, reason: 'matches no trigger.match rule' };
    }
    const ignored = this.#ignore.findIndex((m) => m(incident));
    if (ignored >= 0) return { admitted: false, reason: `matches trigger.ignore rule #${ignored + 1}` };
    if (this.#window > 0) {
      const key = `${incident.status}|${incident.fingerprint}`;
      const t = now.getTime();
      const last = this.#seen.get(key);
      if (last !== undefined && t - last < this.#window) {
        return { admitted: false, reason: `same fingerprint re-sent ${Math.round((t - last) / 1000)} s ago, inside the dedup window` };
      }
      this.#seen.delete(key);
      this.#seen.set(key, t);
      if (this.#seen.size > MAX_REMEMBERED) this.#seen.delete(this.#seen.keys().next().value!);
    }
    return { admitted: true };
  }
}

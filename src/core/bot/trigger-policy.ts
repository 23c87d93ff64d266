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

  constructor(opts: TriggerPolicyOptions) {
    this.#match = opts.match.map(compileRule);
    this.#ignore = opts.ignore.map(compileRule);
    this.#window = opts.dedupWindowMs;
  }

  /** The dedup window, in ms (0 = off): admissions are recorded only while it is on. */
  get dedupWindowMs(): number {
    return this.#window;
  }

  /**
   * Whether an incident goes on. `lastAdmitted`: when the same fingerprint with the same status
   * was last admitted, as the ledger recorded it — a write that failed recorded nothing, so the
   * sender's retry is not mistaken for a re-send.
   */
  admit(incident: Incident, now: Date, lastAdmitted?: string): Admission {
    if (this.#match.length > 0 && !this.#match.some((m) => m(incident))) {
      return { admitted: false, reason: 'matches no trigger.match rule' };
    }
    const ignored = this.#ignore.findIndex((m) => m(incident));
    if (ignored >= 0) return { admitted: false, reason: `matches trigger.ignore rule #${ignored + 1}` };
    if (this.#window > 0 && lastAdmitted !== undefined) {
      const since = now.getTime() - Date.parse(lastAdmitted);
      if (since >= 0 && since < this.#window) {
        return { admitted: false, reason: `same fingerprint re-sent ${Math.round(since / 1000)} s ago, inside the dedup window` };
      }
    }
    return { admitted: true };
  }
}

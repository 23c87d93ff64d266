/**
 * Noise control (SPEC §4, issue 12) as plain decisions the bot makes inside its transaction:
 * which storm batch an alert belongs to, whether that batch's window is still open, how a storm
 * thread describes itself, and the recurrence cooldown. The bot records each decision.
 */
import type { RecurrenceFacts } from '../ledger/ledger-reader.js';
import type { Incident } from '../types.js';

export interface CoalesceOptions {
  /** Alerts of one Alertmanager notification group (`groupKey`) coalesce. */
  group: boolean;
  /** Alerts whose values of all these labels agree coalesce (checked before the group). */
  labels: readonly string[];
  /** The batch window stays open while alerts keep arriving at most this far apart… */
  debounceMs: number;
  /** …but no longer than this after its first alert. */
  maxWaitMs: number;
  /** Most alerts in one correlation-label batch (and one investigation); the next starts a new batch. An Alertmanager group is never split. */
  maxAlerts: number;
}

export interface NoiseOptions {
  /** Hold a non-critical firing this long; its resolve meanwhile drops both (0 = off). */
  debounceMs: number;
  /** Storm coalescing; absent = off. */
  coalesce?: CoalesceOptions;
  /** A trigger concluded this recently is not investigated again (0 = off). */
  cooldownMs: number;
}

export const NO_NOISE_CONTROL: NoiseOptions = { debounceMs: 0, cooldownMs: 0 };

/**
 * The batch an alert is coalesced under, or undefined when it stands alone: its correlation
 * labels when every one is present, else its Alertmanager group. Critical alerts batch only
 * with critical ones, so their owners are still paged.
 */
export function coalesceKey(incident: Incident, opts: CoalesceOptions | undefined): string | undefined {
  if (!opts) return undefined;
  const tier = incident.severity === 'critical' ? 'critical' : 'other';
  if (opts.labels.length > 0) {
    const values: string[] = [];
    for (const l of opts.labels) {
      const v = incident.labels[l] ?? (l === 'namespace' ? incident.workload?.namespace : l === 'cluster' ? incident.workload?.cluster : undefined);
      if (v === undefined || v === '') {
        values.length = 0;
        break;
      }
      values.push(`${l}=${v}`);
    }
    if (values.length > 0) return `labels:${tier}:${values.join(',')}`;
  }
  if (opts.group && incident.groupKey) return `group:${tier}:${incident.groupKey}`;
  return undefined;
}

/** A storm batch as the bot reads it. */
export interface StormBatch {
  key: string;
  count: number;
  /** Alerts of it still firing. */
  open: number;
  firstAt: string;
  lastAt: string;
  flushed?: boolean;
}

/** Whether a batch is an Alertmanager notification group (its key from `groupKey`). */
export function isGroupKey(key: string): boolean {
  return key.startsWith('group:');
}

/**
 * Whether another alert may still join the batch at `now`. An Alertmanager group is one thread
 * while any of its alerts fires, however slowly Alertmanager sends the rest (its
 * `group_interval` is minutes): only a correlation-label batch has a window and a size.
 */
export function batchOpen(b: StormBatch, now: Date, opts: CoalesceOptions): boolean {
  if (b.flushed) return false;
  if (isGroupKey(b.key)) return b.open > 0;
  if (b.count >= opts.maxAlerts) return false;
  const t = now.getTime();
  return t - Date.parse(b.lastAt) < opts.debounceMs && t - Date.parse(b.firstAt) < opts.maxWaitMs;
}

/** Whether the batch's window has closed by `now` (time to flush it once); a group's has none. */
export function batchDue(b: StormBatch, now: Date, opts: CoalesceOptions): boolean {
  return !b.flushed && !isGroupKey(b.key) && !batchOpen(b, now, opts);
}

/** Workloads named on the card before "+N more". */
const CARD_WORKLOADS = 8;
/** Workloads the ledger lists per storm thread (`ledger-noise.ts`). */
const STORM_WORKLOADS = 50;

/** What the card says a truncated group left out ("" when nothing was). */
export function truncatedNote(truncated: number | undefined): string {
  if (!truncated || truncated <= 0) return '';
  return `Alertmanager left out ${truncated} alert${truncated === 1 ? '' : 's'} of this group (its max_alerts)`;
}

/**
 * The storm card's state note: "storm: 12 alerts on 9 workloads — a, b, … (+1 more); 3 resolved";
 * a group's: "Alertmanager group: 50 alerts (47 firing, 3 resolved) on node1, node2, … (+42 more)",
 * then what Alertmanager left out.
 */
export function stormNote(s: { key?: string; count: number; open: number; workloads: readonly string[]; truncated?: number }): string {
  const shown = s.workloads.slice(0, CARD_WORKLOADS).join(', ');
  const more = s.workloads.length > CARD_WORKLOADS ? ` (+${s.workloads.length - CARD_WORKLOADS} more)` : '';
  const resolved = s.count - s.open;
  const left = truncatedNote(s.truncated);
  if (s.key !== undefined && isGroupKey(s.key)) {
    // Past the workloads the ledger lists, count the alerts not named.
    const capped = s.workloads.length >= STORM_WORKLOADS && s.count > s.workloads.length;
    const hidden = capped ? s.count - Math.min(CARD_WORKLOADS, s.workloads.length) : s.workloads.length - CARD_WORKLOADS;
    const rest = hidden > 0 ? ` (+${hidden} more${capped ? ' alerts' : ''})` : '';
    const alerts = `${s.count} alert${s.count === 1 ? '' : 's'} (${s.open} firing${resolved > 0 ? `, ${resolved} resolved` : ''})`;
    return `Alertmanager group: ${alerts} on ${shown}${rest}${left ? `; ${left}` : ''}`;
  }
  return `storm: ${s.count} alerts on ${s.workloads.length} workload${s.workloads.length === 1 ? '' : 's'} — ${shown}${more}${resolved > 0 ? `; ${resolved} resolved, ${s.open} firing` : ''}${left ? `; ${left}` : ''}`;
}

export type { RecurrenceFacts };

/**
 * The recurrence cooldown (SPEC §8, opt-in): the reason to hold back, or undefined to go on. A
 * trigger that never concluded always goes through (there is no answer to stand on), and a
 * standing 👎 re-arms it at once.
 */
export function cooldownReason(r: RecurrenceFacts, now: Date, cooldownMs: number): string | undefined {
  if (cooldownMs <= 0 || !r.concluded || r.standingDown > 0 || r.lastLookAt === undefined) return undefined;
  const since = now.getTime() - Date.parse(r.lastLookAt);
  if (!(since >= 0 && since < cooldownMs)) return undefined;
  return `concluded ${Math.round(since / 60_000)} min ago; the recurrence cooldown (${Math.round(cooldownMs / 60_000)} min) holds until it lapses or a 👎 re-arms it`;
}

/**
 * PagerDuty's incident history as `reprise import pagerduty` reads it (issue 31 item 3): resolved
 * incidents in a time window, each one's notes and how it was resolved. An adapter translates
 * PagerDuty's REST API to these; the domain reads the incident objects itself
 * (core/pagerduty.ts), so they are handed over as PagerDuty sent them.
 */
import type { PagerDutyNote, PagerDutyResolve } from '../core/import/pagerduty-fix.js';

export type { PagerDutyNote, PagerDutyResolve };

export interface ResolvedIncidentsQuery {
  since: Date;
  until: Date;
  /** Only these services' incidents (PagerDuty service ids); every service when empty. */
  serviceIds: readonly string[];
}

/**
 * A read of PagerDuty that failed after the adapter's retries. `fatal` when no later read can
 * succeed either (the token refused, the query refused): the import stops and says `message`.
 */
export class PagerDutyReadError extends Error {
  readonly fatal: boolean;
  readonly status: number | undefined;
  constructor(message: string, opts: { fatal: boolean; status?: number; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'PagerDutyReadError';
    this.fatal = opts.fatal;
    this.status = opts.status;
  }
}

export interface PagerDutyHistoryPort {
  /** Every resolved incident created in the window, all pages, as PagerDuty sent them; `onPage` hears the running count. */
  resolvedIncidents(q: ResolvedIncidentsQuery, onPage?: (count: number) => void): Promise<unknown[]>;
  /** The incident's notes, oldest first. */
  notes(incidentId: string): Promise<PagerDutyNote[]>;
  /** The incident's resolve (its `resolve_log_entry`), undefined when its log has none. */
  resolve(incidentId: string): Promise<PagerDutyResolve | undefined>;
}

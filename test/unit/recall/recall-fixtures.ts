/**
 * Small catalogs and incidents for recall, render, bot and eval tests. Entries are real
 * markdown run through `parseEntry`; incidents are real Alertmanager payloads run through
 * `parseAlertmanagerPayload`; the index is the production recall index unless a test
 * needs exact scores (then `fixedScoreIndex`, a fake of the SearchIndex port).
 */
import { parseAlertmanagerPayload } from '../../../src/core/alertmanager.js';
import { parseEntry } from '../../../src/core/catalog/parse-entry.js';
import { buildCatalogSnapshot, type CatalogSnapshot } from '../../../src/core/recall/catalog-snapshot.js';
import { PostingsIndex } from '../../../src/core/search/postings-index.js';
import type { RecallOptions, TrackLookup } from '../../../src/core/recall/recall.js';
import { NEUTRAL_QUERY_WEIGHTS } from '../../../src/core/recall/build-query.js';
import type { Candidate, Entry, GateTraceStep, Incident } from '../../../src/core/types.js';
import type { SearchIndex } from '../../../src/ports/search-index.js';

export const DAY_MS = 86_400_000;
/** "Now" for every recall test: entries dated 2025-12 are fresh, 2025-01 stale. */
export const NOW = new Date('2026-01-01T00:00:00Z');

/**
 * Realistic thresholds (the shape `recall.*` config maps onto), at the calibrated defaults:
 * `marginGap` is a fraction of the top score (0.3 = the top leads the runner-up by 30%).
 */
export function recallOpts(over: Partial<RecallOptions> = {}): RecallOptions {
  return {
    k: 20,
    minScore: 6,
    marginGap: 0.3,
    soloFloor: 8,
    outcomeFloor: 0.5,
    maxFallbacks: 3,
    // Off by default so hand-set scores stay exact; name-coverage tests turn it on.
    nameBoost: 0,
    siblingOverlap: 0.5,
    siblingWindow: 1,
    // Every part of the alert at weight 1, as before query weights existed.
    query: { ...NEUTRAL_QUERY_WEIGHTS },
    confidenceCap: 0.9,
    staleAfterMs: 180 * DAY_MS,
    staleFactor: 0.75,
    scopelessFactor: 0.6,
    unconfirmedCap: 0.7,
    liveStateTools: false,
    ...over,
  };
}

/** Parses markdown into an Entry, failing loudly if the fixture itself is broken. */
export function entryFrom(id: string, markdown: string): Entry {
  const r = parseEntry(id, markdown);
  if (!r.entry) throw new Error(`fixture ${id} did not parse: ${JSON.stringify(r.problems)}`);
  return r.entry;
}

export interface IncidentEntrySpec {
  resource: string;
  title: string;
  alertResource?: string;
  status?: string;
  timestamp?: string;
  lastValidated?: string;
  tags?: string[];
  symptom?: string;
  cause?: string;
  resolution?: string;
  tried?: string;
}

/** An Incident entry (SPEC §5) scoped to `resource`. */
export function incidentEntry(id: string, s: IncidentEntrySpec): Entry {
  const fm = [
    'type: Incident',
    `title: ${JSON.stringify(s.title)}`,
    `resource: ${s.resource}`,
    s.alertResource ? `alert_resource: ${s.alertResource}` : '',
    s.status ? `status: ${s.status}` : '',
    `timestamp: ${s.timestamp ?? '2025-12-01'}`,
    s.lastValidated ? `last_validated: ${s.lastValidated}` : '',
    s.tags ? `tags: [${s.tags.join(', ')}]` : '',
  ].filter(Boolean);
  const body = [
    `## Symptom\n\n${s.symptom ?? s.title}`,
    `## Cause\n\n${s.cause ?? 'Unknown cause.'}`,
    `## Resolution\n\n${s.resolution ?? 'Restarted it.'}`,
    s.tried ? `## Tried and failed\n\n${s.tried}` : '',
  ].filter(Boolean);
  return entryFrom(id, `---\n${fm.join('\n')}\n---\n\n${body.join('\n\n')}\n`);
}

export interface PlaybookSpec {
  title: string;
  alerts?: string[];
  status?: string;
  source?: string;
  description?: string;
  body: string;
}

/** A resource-less Playbook (a runbook). */
export function playbook(id: string, s: PlaybookSpec): Entry {
  const fm = [
    'type: Playbook',
    `title: ${JSON.stringify(s.title)}`,
    s.alerts ? `alerts: [${s.alerts.join(', ')}]` : '',
    s.status ? `status: ${s.status}` : '',
    s.source ? `source: ${s.source}` : '',
    s.description ? `description: ${JSON.stringify(s.description)}` : '',
    'timestamp: 2025-12-01',
  ].filter(Boolean);
  return entryFrom(id, `---\n${fm.join('\n')}\n---\n\n${s.body}\n`);
}

/** Snapshot over the index `serve` answers with (`PostingsIndex`). */
export function servedSnapshot(entries: readonly Entry[]): CatalogSnapshot {
  return buildCatalogSnapshot(entries, new PostingsIndex(entries), NOW);
}

/**
 * A SearchIndex fake with scores chosen by the test, so margin and floor boundaries are
 * exact. Entries without a score (or with 0) are not returned by `search`.
 */
export function fixedScoreIndex(entries: readonly Entry[], scores: Readonly<Record<string, number>>): SearchIndex {
  return {
    size: entries.length,
    search(_tokens, k): Candidate[] {
      return entries
        .filter((e) => (scores[e.id] ?? 0) > 0)
        .map((e) => ({ entry: e, score: scores[e.id] ?? 0 }))
        .sort((a, b) => b.score - a.score || a.entry.id.localeCompare(b.entry.id))
        .slice(0, k);
    },
    score: (_tokens, id) => scores[id] ?? 0,
  };
}

export function fixedSnapshot(entries: readonly Entry[], scores: Readonly<Record<string, number>>): CatalogSnapshot {
  return buildCatalogSnapshot(entries, fixedScoreIndex(entries, scores), NOW);
}

export interface AlertSpec {
  alertname: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  status?: 'firing' | 'resolved';
  fingerprint?: string;
  startsAt?: string;
  generatorURL?: string;
}

/** The Alertmanager v4 payload for one alert. */
export function alertPayload(a: AlertSpec): unknown {
  return {
    version: '4',
    status: a.status ?? 'firing',
    receiver: 'reprise',
    groupKey: `{}:{alertname="${a.alertname}"}`,
    alerts: [
      {
        status: a.status ?? 'firing',
        labels: { alertname: a.alertname, ...a.labels },
        annotations: a.annotations ?? {},
        startsAt: a.startsAt ?? '2025-12-31T23:50:00Z',
        endsAt: '0001-01-01T00:00:00Z',
        ...(a.fingerprint ? { fingerprint: a.fingerprint } : {}),
        ...(a.generatorURL ? { generatorURL: a.generatorURL } : {}),
      },
    ],
  };
}

/** One Incident, normalized exactly as the webhook would. */
export function alert(a: AlertSpec): Incident {
  const i = parseAlertmanagerPayload(alertPayload(a)).incidents[0];
  if (!i) throw new Error('fixture alert produced no incident');
  return i;
}

/** No ledger history at all: nothing graded yet for any entry. */
export const noHistory: TrackLookup = () => ({ recalls: 0, resolved: 0, failed: 0, inFlight: 0, up: 0, down: 0, rate: 0.5, factor: 1, withheld: true });

/**
 * Track records by entry id (every recall concluded: `recalls - resolved` failed); anything
 * unlisted has no history. Same formulas as ledger-reads' trackRecord.
 */
export function tracks(records: Readonly<Record<string, { recalls: number; resolved: number; up?: number; down?: number }>>): TrackLookup {
  return (id, kind) => {
    const r = records[id];
    if (!r) return noHistory(id, kind);
    const up = r.up ?? 0;
    const down = r.down ?? 0;
    const failed = r.recalls - r.resolved;
    const s = kind === 'runbook' ? up : r.resolved + up;
    const n = kind === 'runbook' ? up + down : r.resolved + failed + up + down;
    return { recalls: r.recalls, resolved: r.resolved, failed, inFlight: 0, up, down, rate: (s + 1) / (n + 2), factor: (s + 1) / (n + 1), withheld: n === 0 };
  };
}

/** Trace steps of one gate, optionally for one entry. */
export function stepsOf(trace: readonly GateTraceStep[], gate: GateTraceStep['gate'], entry?: string): GateTraceStep[] {
  return trace.filter((s) => s.gate === gate && (entry === undefined || s.entry === entry));
}

/**
 * The answers the engine builds itself: a recalled entry as a Finding, the partial Finding of
 * a run a budget stopped, and the degraded answer when the model could not be used.
 */
import type { RecurrenceFacts, RecurrenceSource } from '../../ports/investigation-memory.js';
import type { CatalogSnapshot } from '../recall/catalog-snapshot.js';
import { buildQuery } from '../recall/build-query.js';
import type { Entry, Incident } from '../types.js';
import type { Finding, InvestigatorVersion, ModelFinding } from './finding.js';

const clip = (s: string, n: number): string => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};

/** A recalled catalog entry as a Finding (its cause and resolution; the entry is the evidence). */
export function recallFinding(entry: Entry, confidence: number, version: InvestigatorVersion): Finding {
  const cause = entry.sections['cause'] ?? entry.description ?? entry.title;
  const resolution = entry.sections['resolution'];
  return {
    summary: clip(entry.title, 600),
    verdict: resolution ? 'action_suggested' : 'inconclusive',
    confidence,
    rootCauses: [
      {
        cause: clip(cause || entry.title, 600),
        confidence,
        evidence: [`recalled from catalog entry ${entry.id}`],
        entities: entry.resource?.name ? [entry.resource.name] : [],
      },
    ],
    // A catalog resolution is prose a human wrote: whether it can be undone is not known, so it is not claimed.
    suggestedActions: resolution ? resolutionActions(resolution).map((a) => ({ action: clip(a, 600), reversible: false })) : [],
    ruledOut: [],
    openQuestions: [],
    dataGaps: [],
    investigator: version,
    partial: false,
  };
}

/**
 * A resolution written as a list (as Reprise drafts entries) is one action per item, without
 * its list marker; prose, or a list mixed with prose, is one action.
 */
export function resolutionActions(text: string): string[] {
  const items: string[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const item = /^\s*(?:[-*+]|\d{1,3}[.)])\s+(.*)$/.exec(line);
    if (item) items.push(item[1]!);
    else if (items.length > 0 && /^\s/.test(line)) items[items.length - 1] += ` ${line.trim()}`;
    else return [text];
  }
  return items.length > 0 ? items.slice(0, 8) : [text];
}

/** What a run that a budget stopped still says: nothing concluded, and what it had checked. */
export function partialFinding(detail: string, checked: readonly string[]): ModelFinding {
  return {
    summary: clip(`Investigation stopped before a conclusion: ${detail}`, 600),
    verdict: 'inconclusive',
    confidence: 0,
    rootCauses: [],
    suggestedActions: [],
    ruledOut: [],
    openQuestions: [],
    dataGaps: [
      clip(detail, 600),
      clip(checked.length ? `checked before stopping: ${checked.map((c) => c.split(' — ')[0]).join('; ')}` : 'nothing was checked before stopping', 600),
    ],
  };
}

/** The degraded answer (SPEC §7): recurrence facts and the closest catalog entries, clearly marked. */
export interface DegradedAnswer {
  marker: 'degraded';
  reason: string;
  recurrence?: RecurrenceFacts;
  closest: Array<{ id: string; title: string; score: number }>;
}

export async function degradedAnswer(
  incident: Incident,
  catalog: CatalogSnapshot,
  recurrence: RecurrenceSource | undefined,
  reason: string,
): Promise<DegradedAnswer> {
  const q = buildQuery(incident);
  const closest = catalog.index
    .search(q.tokens, 10, q.weights)
    .filter((c) => c.entry.status === 'active')
    .slice(0, 3)
    .map((c) => ({ id: c.entry.id, title: c.entry.title, score: Math.round(c.score * 100) / 100 }));
  let facts: RecurrenceFacts | undefined;
  try {
    facts = recurrence ? await recurrence(incident) : undefined;
  } catch {
    facts = undefined; // the degraded answer must not fail for want of its extras
  }
  return { marker: 'degraded', reason, ...(facts ? { recurrence: facts } : {}), closest };
}

import { parseAlertmanagerPayload } from '../src/core/alertmanager.js';
import { tokenize } from '../src/core/tokenize.js';
import type { Entry, Incident } from '../src/core/types.js';
import { createRng } from '../src/core/eval/prng.js';
import type { Rng } from '../src/core/eval/prng.js';
import { pick, randInt } from './sampling.js';
import type { SyntheticCatalog } from './synthetic-catalog.js';

/** One search query: the text an alert would carry, and its tokens (what indexes receive). */
export interface SyntheticQuery {
  /** Entry the query was made from (it should rank near the top). */
  source: string;
  text: string;
  tokens: string[];
}

function bodyWords(rng: Rng, entry: Entry, n: number): string[] {
  const words = entry.body.split(/[^\p{L}\p{N}-]+/u).filter((w) => w.length > 2);
  return Array.from({ length: n }, () => pick(rng, words.length > 0 ? words : ['empty']));
}

/**
 * Queries shaped like real alert text: a random entry's title, a few of its body words and a
 * few unrelated (Zipf) noise words, in shuffled order.
 */
export function generateQueries(catalog: SyntheticCatalog, count: number, seed = 7): SyntheticQuery[] {
  const rng = createRng(seed);
  const out: SyntheticQuery[] = [];
  for (let i = 0; i < count; i++) {
    const entry = pick(rng, catalog.entries);
    const parts = [entry.title, ...bodyWords(rng, entry, randInt(rng, 2, 4))];
    for (let j = randInt(rng, 2, 4); j > 0; j--) parts.push(catalog.word(rng));
    const text = parts.join(' ');
    out.push({ source: entry.id, text, tokens: tokenize(text) });
  }
  return out;
}

/** One Alertmanager alert, as a webhook carries it. */
export interface SyntheticAlert {
  status: 'firing';
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  fingerprint: string;
}

/**
 * Alertmanager alerts, one per random entry: a past incident's alert on its own workload (the
 * recurrence recall is for), or a runbook's alert on some workload.
 */
export function generateAlerts(catalog: SyntheticCatalog, count: number, seed = 11): SyntheticAlert[] {
  const rng = createRng(seed);
  const byLower = new Map(catalog.alertNames.map((a) => [a.toLowerCase(), a]));
  const out: SyntheticAlert[] = [];
  for (let i = 0; i < count; i++) {
    const entry = pick(rng, catalog.entries);
    const alertname = byLower.get(entry.alerts[0] ?? '') ?? pick(rng, catalog.alertNames);
    const ns = entry.resource?.namespace ?? pick(rng, catalog.namespaces);
    const name = entry.resource?.name ?? pick(rng, catalog.workloads);
    const titleWords = entry.title.split(' ').slice(1, randInt(rng, 3, 6));
    const noise = Array.from({ length: randInt(rng, 2, 4) }, () => catalog.word(rng));
    out.push({
      status: 'firing',
      labels: {
        alertname,
        namespace: ns,
        pod: `${name}-7d9f8c6b5-${(i % 100000).toString(36).padStart(5, 'x')}`,
        container: name,
        job: 'kube-state-metrics',
        severity: pick(rng, ['critical', 'warning']),
        cluster: 'prod-eu-1',
      },
      annotations: {
        summary: `${alertname} on ${ns}/${name}: ${titleWords.join(' ')}`,
        description: [...bodyWords(rng, entry, randInt(rng, 2, 4)), ...noise].join(' '),
      },
      startsAt: '2025-06-01T10:00:00Z',
      fingerprint: `fp${i}`,
    });
  }
  return out;
}

/**
 * `generateAlerts` parsed into incidents through the real normaliser (outside any timing).
 */
export function generateIncidents(catalog: SyntheticCatalog, count: number, seed = 11): Incident[] {
  return generateAlerts(catalog, count, seed).flatMap(
    (alert) => parseAlertmanagerPayload({ version: '4', status: 'firing', receiver: 'reprise', alerts: [alert] }).incidents,
  );
}

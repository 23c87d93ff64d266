import type { Entry, EntryStatus, ResourceRef } from '../src/core/types.js';
import { createRng } from '../src/core/eval/prng.js';
import type { Rng } from '../src/core/eval/prng.js';
import { pick, randInt, zipfSampler } from './sampling.js';
import { ALERT_PARTS, buildVocabulary } from './vocabulary.js';

/** Words in the synthetic vocabulary ("a few thousand", Zipf-distributed). */
export const VOCABULARY_SIZE = 4000;

/** A generated catalog plus the pools it was drawn from (queries and alerts reuse them). */
export interface SyntheticCatalog {
  entries: Entry[];
  vocabulary: readonly string[];
  /** CamelCase alert names, one Playbook each. */
  alertNames: readonly string[];
  namespaces: readonly string[];
  /** Workload names; workload i lives in namespace `namespaceOf(i)`. */
  workloads: readonly string[];
  /** Samples a vocabulary word with Zipf frequencies. */
  word: (rng: Rng) => string;
}

/** Distinct CamelCase alert names in a seeded order, e.g. `KafkaConsumerLagging`. */
function alertNames(rng: Rng, count: number, vocabulary: readonly string[]): string[] {
  const combos: string[] = [];
  for (const p of ALERT_PARTS.prefix) for (const s of ALERT_PARTS.subject) for (const c of ALERT_PARTS.condition) combos.push(p + s + c);
  for (let i = combos.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [combos[i], combos[j]] = [combos[j] as string, combos[i] as string];
  }
  const out = combos.slice(0, count);
  // Past the combinations, a pseudo-word qualifier keeps names unique.
  for (let i = 0; out.length < count; i++) {
    const w = vocabulary[(i * 7919) % vocabulary.length] ?? 'x';
    out.push(`${combos[i % combos.length] ?? 'Alert'}${w[0]?.toUpperCase() ?? ''}${w.slice(1)}`);
  }
  return out;
}

function words(rng: Rng, word: (rng: Rng) => string, min: number, max: number): string[] {
  const n = randInt(rng, min, max);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(word(rng));
  return out;
}

/**
 * A body of 150–400 words: Zipf vocabulary with the entry's topic words mixed in (real entries
 * repeat what they are about) and the alert name or workload mentioned now and then, split into
 * the usual sections.
 */
function body(rng: Rng, word: (rng: Rng) => string, topic: readonly string[], mentions: readonly string[]): string {
  const n = randInt(rng, 150, 400);
  const headings = ['## Symptom', '## Diagnosis', '## Mitigation', '## Follow-up'];
  const parts: string[] = [];
  let sentence: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i % Math.ceil(n / headings.length) === 0) parts.push(`\n\n${headings[Math.floor(i / Math.ceil(n / headings.length))] ?? '## Notes'}\n\n`);
    const u = rng();
    sentence.push(u < 0.1 ? pick(rng, topic) : u < 0.12 ? pick(rng, mentions) : word(rng));
    if (sentence.length >= randInt(rng, 8, 16)) {
      parts.push(`${sentence.join(' ')}. `);
      sentence = [];
    }
  }
  parts.push(`${sentence.join(' ')}.`);
  return parts.join('');
}

function status(rng: Rng): EntryStatus {
  const u = rng();
  return u < 0.03 ? 'retired' : u < 0.05 ? 'draft' : 'active';
}

/** Index of the namespace workload `i` lives in. */
export function namespaceOf(i: number, namespaceCount: number): number {
  return i % namespaceCount;
}

/**
 * A deterministic catalog of `size` entries: one Playbook per alert name (≈10%, resource-less,
 * `alerts: [name]`, file named after the alert) and Incident entries (resource `ns/name`, ≈9
 * past incidents per workload, so recurrences compete in the margin gate).
 */
export function generateCatalog(size: number, seed = 42): SyntheticCatalog {
  const rng = createRng(seed);
  const vocabulary = buildVocabulary(rng, VOCABULARY_SIZE);
  const zipf = zipfSampler(vocabulary.length, 1);
  const word = (r: Rng): string => vocabulary[zipf(r)] ?? 'x';
  const alertCount = Math.max(1, Math.min(size, Math.max(40, Math.round(size / 10))));
  const alerts = alertNames(rng, alertCount, vocabulary);
  const namespaces = Array.from({ length: 60 }, () => `${pick(rng, vocabulary)}-${pick(rng, ['prod', 'staging', 'platform', 'data', 'edge'])}`);
  const workloads = Array.from({ length: Math.max(1, Math.round(size / 10)) }, (_, i) => `${pick(rng, vocabulary)}-${pick(rng, vocabulary)}-${i}`);
  const tail = vocabulary.slice(300);

  const entries: Entry[] = [];
  for (let i = 0; i < size; i++) {
    const topic = Array.from({ length: 5 }, () => pick(rng, tail));
    if (i < alertCount) {
      const alert = alerts[i] ?? 'UnknownAlert';
      entries.push({
        id: `runbooks/${alert.slice(0, 4).toLowerCase()}/${alert}.md`,
        type: 'Playbook',
        title: `${alert} ${words(rng, word, 3, 7).join(' ')} ${topic[0] ?? ''}`,
        description: [...words(rng, word, 8, 18), topic[1] ?? ''].join(' '),
        tags: [...words(rng, word, 2, 4), alert.toLowerCase()],
        status: status(rng),
        alerts: [alert.toLowerCase()],
        sections: {},
        body: body(rng, word, topic, [alert]),
        foreign: false,
      });
      continue;
    }
    const alert = pick(rng, alerts);
    const w = randInt(rng, 0, workloads.length - 1);
    const ns = namespaces[namespaceOf(w, namespaces.length)] ?? 'default';
    const name = workloads[w] ?? 'app';
    const resource: ResourceRef = { raw: `${ns}/${name}`, namespace: ns, name };
    const day = new Date(Date.UTC(2023, 0, 1) + randInt(rng, 0, 900) * 86_400_000).toISOString().slice(0, 10);
    entries.push({
      id: `incidents/${day}-${name}-${i}.md`,
      type: 'Incident',
      title: `${alert} on ${name}: ${words(rng, word, 4, 8).join(' ')} ${topic[0] ?? ''}`,
      description: [...words(rng, word, 8, 18), topic[1] ?? ''].join(' '),
      resource,
      tags: [...words(rng, word, 2, 4), alert.toLowerCase()],
      timestamp: day,
      status: status(rng),
      alerts: [alert.toLowerCase()],
      sections: {},
      body: body(rng, word, topic, [alert, name, ns]),
      foreign: false,
    });
  }
  return { entries, vocabulary, alertNames: alerts, namespaces, workloads, word };
}

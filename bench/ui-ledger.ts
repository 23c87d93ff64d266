/**
 * The memory view's big store, fast (issue 23 item 3): a 10,000-entry catalog on disk and a
 * 1,000,000-event ledger written straight into the embedded sqlite store of a data dir, then
 * opened once — the replay folds the read model and closing writes the snapshot `reprise
 * serve` starts from, exactly as a long-running bot leaves it.
 *
 * The events are valid ledger events of the kinds the view folds, over the last `days` days:
 * opens with ids and the alert (⚡ recalls of catalog entries with Zipf popularity, 📚 runbooks,
 * fresh ones), their resolves, the model's findings (calls, tokens; a few degraded), first acks,
 * 👍/👎 in threads, 🔕 silences and the firings they drop, curation decisions with KB PR URLs.
 * Streamed in batches of 1000 (one sqlite transaction each): nothing holds the million at once.
 */
import { mkdirSync } from 'node:fs';
import { createStore, KeyvStore } from '../src/adapters/keyv/keyv-store.js';
import type { LedgerEvent } from '../src/core/ledger-events.js';
import type { Verdict } from '../src/core/verdict.js';
import { eventKey, HEAD_KEY, Ledger } from '../src/core/ledger/ledger.js';
import { createRng } from '../src/core/eval/prng.js';
import type { Entry } from '../src/core/types.js';
import { writeCatalogFiles } from './catalog-files.js';
import { pick, zipfSampler } from './sampling.js';
import { generateCatalog } from './synthetic-catalog.js';

export interface UiLedgerShape {
  events: number;
  /** Distinct trigger keys (alert × workload), fired with Zipf frequencies. */
  triggers: number;
  /** Days the events span, ending at `end`. */
  days: number;
  end: Date;
  users: number;
  /**
   * Only opens among the last this many events carry an `id` (what a thread, an ack or a vote
   * refers to); older ones are written as an older ledger wrote them, without one. The fold
   * forgets the oldest thread with a `for…in` over 10,000 keys on every open past its cap
   * (~3 ms each here), so a million events of opens that all carry ids take a quarter of an
   * hour to replay: only the tail carries them, a little past the cap (the cap is exercised).
   */
  idTailEvents: number;
}

export interface UiLedgerFacts {
  events: number;
  opens: number;
  /** The newest open's id (its incident page is benchmarked). */
  newestOpen: string;
  /** The entry recalled most (its page is benchmarked). */
  hottestEntry: string;
  /** Records the replay skipped as invalid (should be 0). */
  skipped: number;
  writeMs: number;
  snapshotMs: number;
}

const VERDICTS: readonly Verdict[] = ['action_required', 'action_suggested', 'inconclusive', 'no_action'];

/** Opens a fingerprint may stack before it is resolved (below the ledger's bound). */
const RECENT = 400;

/**
 * Generates `shape.events` events over the catalog `entries` (ids of Incident entries are
 * recalled, Playbooks are runbooks), handing them to `sink` in batches.
 */
export async function generateUiEvents(
  entries: readonly Entry[],
  shape: UiLedgerShape,
  sink: (batch: LedgerEvent[]) => Promise<void>,
  seed = 23,
): Promise<Pick<UiLedgerFacts, 'events' | 'opens' | 'newestOpen' | 'hottestEntry'>> {
  const rng = createRng(seed);
  const incidents = entries.filter((e) => e.type === 'Incident');
  const playbooks = entries.filter((e) => e.type === 'Playbook');
  if (incidents.length === 0 || playbooks.length === 0) throw new Error('ui ledger: the catalog needs Incident and Playbook entries');
  const hot = zipfSampler(incidents.length, 0.9);
  const trig = zipfSampler(shape.triggers, 0.8);
  const step = (shape.days * 86_400_000) / shape.events;
  const start = shape.end.getTime() - shape.days * 86_400_000;
  const triggerKey = (i: number): string => `alert${i % 700}|ns${i % 80}|deployment|wl${i}|prod`;
  const alertname = (i: number): string => `Alert${i % 700}`;
  /** Recent opens: what resolves, findings, acks and votes refer to. */
  const recent: Array<{ id: string; fp: string; trigger: number; fresh: boolean; resolved: boolean }> = [];
  let batch: LedgerEvent[] = [];
  let n = 0;
  let opens = 0;
  let pr = 0;
  let newestOpen = '';
  const push = async (e: LedgerEvent): Promise<void> => {
    batch.push(e);
    n++;
    if (batch.length === 1000) {
      await sink(batch);
      batch = [];
    }
  };
  while (n < shape.events) {
    const at = new Date(start + n * step).toISOString();
    const u = rng();
    const target = recent.length > 0 ? recent[recent.length - 1 - Math.floor(rng() * Math.min(recent.length, 50))]! : undefined;
    if (u < 0.34 || !target) {
      const i = trig(rng);
      const id = `o${opens++}`;
      const withId = n >= shape.events - shape.idTailEvents;
      // Two alert instances per trigger: the ledger keeps 50,000 fingerprints and forgets the
      // oldest with the same `for…in` (~40 ms each at that size here), so a generator minting one
      // per open would measure that eviction, not the view.
      const fp = `fp${i}-${rng() < 0.5 ? 0 : 1}`;
      const v = rng();
      const recalled = v < 0.55 ? pick(rng, [incidents[hot(rng)]!]) : undefined;
      const runbook = !recalled && v < 0.75 ? playbooks[i % playbooks.length]! : undefined;
      const lead = recalled ?? runbook;
      await push({
        type: 'open',
        ...(withId ? { id } : {}),
        fingerprint: fp,
        triggerKey: triggerKey(i),
        kind: recalled ? 'recall' : 'fresh',
        ...(lead ? { entry: lead.id, answerKind: recalled ? 'incident' : 'runbook' } : {}),
        dupFingerprint: `dup${i % 3000}`,
        verdict: recalled ? 'action_suggested' : pick(rng, VERDICTS),
        resolvable: true,
        startsAt: at,
        source: 'alertmanager',
        alert: {
          alertname: alertname(i),
          title: `${alertname(i)} on wl${i}`,
          message: `wl${i} in ns${i % 80} is unhappy`,
          resource: `ns${i % 80}/wl${i}`,
          where: `prod/ns${i % 80}/wl${i}`,
        },
        at,
      });
      if (withId) newestOpen = id;
      recent.push({ id, fp, trigger: i, fresh: !recalled, resolved: false });
      if (recent.length > RECENT) {
        const old = recent.shift()!;
        if (!old.resolved && n < shape.events) await push({ type: 'resolve', fingerprint: old.fp, triggerKey: triggerKey(old.trigger), at });
      }
    } else if (u < 0.6) {
      if (target.resolved) continue;
      target.resolved = true;
      await push({ type: 'resolve', fingerprint: target.fp, triggerKey: triggerKey(target.trigger), at });
    } else if (u < 0.72) {
      const degraded = rng() < 0.08;
      await push({
        type: 'finding',
        openId: target.id,
        fingerprint: target.fp,
        triggerKey: triggerKey(target.trigger),
        kind: 'fresh',
        status: degraded ? 'degraded' : 'completed',
        ...(degraded
          ? { reason: 'the model could not be reached' }
          : { confidence: 0.8, verdict: 'action_required', summary: `wl${target.trigger}: a bad rollout` }),
        calls: degraded ? 1 : 4,
        tokensIn: degraded ? 0 : 8000 + Math.floor(rng() * 4000),
        tokensOut: degraded ? 0 : 600 + Math.floor(rng() * 400),
        at,
      });
    } else if (u < 0.84) {
      await push({
        type: 'ack',
        triggerKey: triggerKey(target.trigger),
        user: `slack:U${Math.floor(rng() * shape.users)}`,
        via: 'slack',
        openId: target.id,
        at,
      });
    } else if (u < 0.94) {
      const v = rng();
      await push({
        type: 'feedback',
        triggerKey: triggerKey(target.trigger),
        user: `slack:U${Math.floor(rng() * shape.users)}`,
        vote: v < 0.7 ? 'up' : v < 0.95 ? 'down' : 'clear',
        openId: target.id,
        via: 'slack',
        at,
      });
    } else if (u < 0.96) {
      const until = new Date(Date.parse(at) + 4 * 3_600_000).toISOString();
      await push({
        type: 'silence',
        triggerKey: triggerKey(target.trigger),
        user: `slack:U${Math.floor(rng() * shape.users)}`,
        until,
        openId: target.id,
        via: 'slack',
        at,
      });
    } else if (u < 0.98) {
      await push({
        type: 'noise',
        action: 'drop',
        fingerprint: `${target.fp}-again`,
        triggerKey: triggerKey(target.trigger),
        reason: 'silence',
        detail: 'silenced: no message, no ledger open',
        at,
      });
    } else {
      const d = rng();
      const decision = d < 0.3 ? 'novel' : d < 0.6 ? 'duplicate_pr' : d < 0.8 ? 'recalled' : 'below_bar';
      const filed = decision === 'novel' || decision === 'duplicate_pr';
      const number = decision === 'novel' ? ++pr : Math.max(1, pr);
      await push({
        type: 'curated',
        subject: 'finding',
        openId: target.id,
        triggerKey: triggerKey(target.trigger),
        decision,
        ...(decision === 'below_bar' ? { detail: 'confidence below 0.75' } : {}),
        ...(filed ? { url: `https://github.example/acme/kb/pull/${number}`, number } : {}),
        at,
      });
    }
  }
  if (batch.length > 0) await sink(batch);
  // Zipf rank 0 is the hottest.
  return { events: n, opens, newestOpen, hottestEntry: incidents[0]!.id };
}

/** Writes the catalog under `catalogDir` and the ledger into `dataDir`'s embedded store, snapshotted. */
export async function writeUiStore(
  catalogDir: string,
  dataDir: string,
  opts: { entries: number; shape: UiLedgerShape; log?: (line: string) => void },
): Promise<UiLedgerFacts> {
  const catalog = generateCatalog(opts.entries);
  writeCatalogFiles(catalogDir, catalog.entries);
  mkdirSync(dataDir, { recursive: true });
  const store = createStore(undefined, dataDir);
  const t0 = performance.now();
  let seq = 0;
  const facts = await generateUiEvents(catalog.entries, opts.shape, async (batch) => {
    const rows = batch.map((value) => ({ key: eventKey(++seq), value }));
    if (store instanceof KeyvStore) await store.keyv.setMany(rows);
    else for (const { key, value } of rows) await store.set(key, value);
    if (seq % 200_000 === 0) opts.log?.(`  ui: ${seq.toLocaleString('en-US')} events written`);
  });
  await store.set(HEAD_KEY, seq);
  const writeMs = performance.now() - t0;
  const t1 = performance.now();
  // Opening replays the events (the fold); closing writes the snapshot serve starts from.
  const ledger = await Ledger.open(store);
  const skipped = ledger.read.skipped;
  await ledger.close();
  await store.close();
  return { ...facts, skipped, writeMs, snapshotMs: performance.now() - t1 };
}

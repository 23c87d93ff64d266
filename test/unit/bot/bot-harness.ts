import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import type { Actor } from '../../../src/core/bot/bot-event.js';
import type { AlertmanagerSilencer, InvestigationJobsPort, NoteLimits } from '../../../src/core/bot/bot-context.js';
import type { NoiseOptions } from '../../../src/core/bot/noise-control.js';
import { RepriseBot } from '../../../src/core/bot/reprise-bot.js';
import { Routing, type MentionRule, type RouteRule } from '../../../src/core/bot/routing.js';
import type { TriggerPolicy } from '../../../src/core/bot/trigger-policy.js';
import { eventKey, Ledger } from '../../../src/core/ledger/ledger.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import { OutboxWorker } from '../../../src/core/outbox/outbox-worker.js';
import type { CatalogSnapshot } from '../../../src/core/recall/catalog-snapshot.js';
import { ManualClock } from '../../../src/ports/clock.js';
import type { Logger } from '../../../src/ports/logger.js';
import type { LoopObserver } from '../../../src/ports/loop-observer.js';
import type { KeyValueStore } from '../../../src/ports/store.js';
import { recallOpts } from '../recall/recall-fixtures.js';
import { RecordingTransport, type RecordingTransportOptions } from './recording-transport.js';

/** Records error and warn logs so a swallowed failure is still visible to the test. */
export function recordingLogger(errors: unknown[], warnings: unknown[] = []): Logger {
  const l: Logger = { debug() {}, info() {}, warn: (o) => void warnings.push(o), error: (o) => void errors.push(o), child: () => l };
  return l;
}

export interface HarnessOptions {
  snapshot: CatalogSnapshot;
  transports?: RecordingTransportOptions[];
  policy?: TriggerPolicy;
  rules?: RouteRule[];
  mentions?: MentionRule[];
  allow?: (a: Actor) => boolean;
  notes?: NoteLimits;
  store?: KeyValueStore;
  clock?: ManualClock;
  /** Threads delivered at once (the outbox's default otherwise). */
  concurrency?: number;
  /** Debounce, storm coalescing, cooldown (off otherwise). */
  noise?: NoiseOptions;
  jobs?: InvestigationJobsPort;
  alertmanager?: AlertmanagerSilencer;
  /** Told recall decisions and deliveries (metrics); `onAppend` is given the ledger's appends. */
  observer?: LoopObserver;
  onAppend?: (events: readonly LedgerEvent[]) => void;
}

/** A bot on a memory (or given) store with recording transports and a real outbox worker. */
export async function botHarness(o: HarnessOptions) {
  const store = o.store ?? createStore('memory://', '');
  const ledger = await Ledger.open(store, o.onAppend ? { onAppend: o.onAppend } : {});
  const clock = o.clock ?? new ManualClock('2026-01-01T00:00:00Z');
  const transports = (o.transports ?? [{}]).map((t) => new RecordingTransport(t));
  const byName = new Map(transports.map((t) => [t.name, t]));
  const errors: unknown[] = [];
  const warnings: unknown[] = [];
  const logger = recordingLogger(errors, warnings);
  const outbox = new OutboxWorker({
    ledger: ledger,
    transports: byName,
    clock,
    logger,
    options: { baseDelayMs: 1000, maxDelayMs: 60_000, ...(o.concurrency ? { concurrency: o.concurrency } : {}) },
    ...(o.observer ? { observer: o.observer } : {}),
  });
  outbox.start();
  const bot = new RepriseBot({
    catalog: () => o.snapshot,
    ledger: ledger,
    clock,
    logger,
    recall: recallOpts(),
    ...(o.policy ? { policy: o.policy } : {}),
    routing: new Routing({
      transports: transports.map((t) => ({ name: t.name, defaultChannel: `#${t.name}`, param: t.name === 'matrix' ? 'room' : 'channel' })),
      rules: o.rules ?? [],
      mentions: o.mentions ?? [],
    }),
    surfaces: byName,
    outbox,
    ...(o.allow ? { allow: o.allow } : {}),
    ...(o.notes ? { notes: o.notes } : {}),
    ...(o.noise ? { noise: o.noise } : {}),
    ...(o.jobs ? { jobs: o.jobs } : {}),
    ...(o.alertmanager ? { alertmanager: o.alertmanager } : {}),
    ...(o.observer ? { observer: o.observer } : {}),
  });
  for (const t of transports) await t.start(bot.onChat);
  const events = async (): Promise<LedgerEvent[]> => {
    const out: LedgerEvent[] = [];
    for (let s = 1; s <= ledger.seq; s++) out.push((await store.get<LedgerEvent>(eventKey(s)))!);
    return out;
  };
  /** Lets the outbox deliver everything deliverable now. */
  const settle = async (): Promise<void> => {
    outbox.kick();
    await outbox.idle();
  };
  return { store, ledger, clock, transports, transport: transports[0]!, outbox, bot, errors, warnings, events, settle };
}

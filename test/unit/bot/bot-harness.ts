import type { ChatTransport } from '../../../src/ports/chat-transport.js';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import type { Actor } from '../../../src/core/chat/chat-types.js';
import type { AlertmanagerSilencer, InvestigationJobsPort, NoteLimits, RepriseBotDeps } from '../../../src/core/bot/bot-context.js';
import type { NoiseOptions } from '../../../src/core/bot/noise-control.js';
import { Routing, type MentionRule, type RouteRule } from '../../../src/core/bot/routing.js';
import type { TriggerPolicy } from '../../../src/core/bot/trigger-policy.js';
import { Ledger } from '../../../src/core/ledger/ledger.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import { buildLoop } from '../../../src/runtime/build-loop.js';
import { feedbackIntent, recordedOrThrow } from '../../../src/core/bot/feedback-request.js';
import type { IncidentOutcome, RepriseBot } from '../../../src/core/bot/reprise-bot.js';
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
  pagerDuty?: RepriseBotDeps['pagerDuty'];
  /** Told recall decisions and deliveries (metrics); `onAppend` is given the ledger's appends. */
  observer?: LoopObserver;
  onAppend?: (events: readonly LedgerEvent[]) => void;
  /** Real transports (a SlackTransport on the Slack stand-in) beside or instead of the recording ones, routed to their default channel. */
  chat?: Array<{ transport: ChatTransport; defaultChannel: string }>;
  /** The outbox's send guard (a replica's lease). */
  mayDeliver?: () => boolean;
  /** Who is on call (issue 32): the reminder's delay, and `/reprise oncall`. */
  onCall?: RepriseBotDeps['onCall'];
  whoIsOnCall?: RepriseBotDeps['whoIsOnCall'];
}

/** A bot on a memory (or given) store with recording transports and a real outbox worker. */
export async function botHarness(o: HarnessOptions) {
  const store = o.store ?? createStore('memory://', '');
  const ledger = await Ledger.open(store, o.onAppend ? { onAppend: o.onAppend } : {});
  const clock = o.clock ?? new ManualClock('2026-01-01T00:00:00Z');
  const transports = (o.transports ?? (o.chat ? [] : [{}])).map((t) => new RecordingTransport(t));
  const byName = new Map<string, ChatTransport>(transports.map((t) => [t.name, t]));
  for (const c of o.chat ?? []) byName.set(c.transport.name, c.transport);
  const errors: unknown[] = [];
  const warnings: unknown[] = [];
  const logger = recordingLogger(errors, warnings);
  const { bot, outbox } = buildLoop({
    ledger,
    catalog: () => o.snapshot,
    clock,
    logger,
    recall: recallOpts(),
    routing: new Routing({
      transports: [
        ...transports.map((t) => ({ name: t.name, defaultChannel: `#${t.name}`, param: t.name === 'matrix' ? 'room' : 'channel' })),
        ...(o.chat ?? []).map((c) => ({ name: c.transport.name, defaultChannel: c.defaultChannel, param: c.transport.name === 'matrix' ? 'room' : 'channel' })),
      ],
      rules: o.rules ?? [],
      mentions: o.mentions ?? [],
    }),
    transports: byName,
    outbox: { baseDelayMs: 1000, maxDelayMs: 60_000, ...(o.concurrency ? { concurrency: o.concurrency } : {}) },
    ...(o.policy ? { policy: o.policy } : {}),
    ...(o.allow ? { allow: o.allow } : {}),
    ...(o.notes ? { notes: o.notes } : {}),
    ...(o.noise ? { noise: o.noise } : {}),
    ...(o.jobs ? { model: { jobs: () => Object.assign(o.jobs!, { stop: async () => undefined, idle: async () => undefined }) } } : {}),
    ...(o.alertmanager ? { alertmanager: o.alertmanager } : {}),
    ...(o.pagerDuty ? { pagerDuty: o.pagerDuty } : {}),
    ...(o.observer ? { observer: o.observer } : {}),
    ...(o.mayDeliver ? { mayDeliver: o.mayDeliver } : {}),
    ...(o.onCall ? { onCall: o.onCall } : {}),
    ...(o.whoIsOnCall ? { whoIsOnCall: o.whoIsOnCall } : {}),
  });
  outbox.start();
  for (const t of transports) await t.start(async (intent) => void (await bot.handle(intent)));
  const events = async (): Promise<LedgerEvent[]> => {
    const out: LedgerEvent[] = [];
    for await (const r of ledger.read.events()) if ('event' in r) out.push(r.event);
    return out;
  };
  /** Lets the outbox deliver everything deliverable now. */
  const settle = async (): Promise<void> => {
    outbox.kick();
    await outbox.idle();
  };
  /** `reprise feedback` as the control socket takes it: the same intent, through the same entrance. */
  const feedback = async (input: Record<string, unknown>) => recordedOrThrow((await bot.handle(feedbackIntent(ledger, input, clock.now())))[0], 'feedback');
  return { store, ledger, clock, transports, transport: transports[0]!, outbox, bot, errors, warnings, events, settle, feedback };
}

/** A tick through the bot's entrance: the firings it released from their debounce hold. */
export async function tick(bot: Pick<RepriseBot, 'handle'>): Promise<IncidentOutcome[]> {
  const [o] = await bot.handle({ type: 'tick' });
  if (o?.status !== 'ticked') throw new Error(`a tick came back ${o?.status ?? 'empty'}`);
  return o.released;
}

/** A resume through the bot's entrance: how many investigations and Alertmanager silences it started. */
export async function resume(bot: Pick<RepriseBot, 'handle'>): Promise<{ investigations: number; amSilences: number }> {
  const [o] = await bot.handle({ type: 'resume' });
  if (o?.status !== 'resumed') throw new Error(`a resume came back ${o?.status ?? 'empty'}`);
  return { investigations: o.investigations, amSilences: o.amSilences };
}

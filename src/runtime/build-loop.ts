/**
 * The one place the loop is put together (STYLE.md "one composition root"): the bot — its one
 * entrance — the outbox worker that delivers what it records, and, when they are configured, the
 * model's job scheduler and the forge's curation worker, each handing what it comes back with to
 * the bot's entrance. `serve`, `demo`, the offline CLI and the test harnesses all build it here.
 */
import type { FixOptions, QuestionModel, QuestionOptions } from '../core/bot/bot-context.js';
import type { AlertmanagerSilencer, BotLedger, NoteLimits, RepriseBotDeps } from '../core/bot/bot-context.js';
import type { Intent } from '../core/bot/intent.js';
import type { InvestigationJobsPort } from '../core/bot/bot-context.js';
import type { NoiseOptions } from '../core/bot/noise-control.js';
import { RepriseBot } from '../core/bot/reprise-bot.js';
import type { Routing } from '../core/bot/routing.js';
import type { TriggerPolicy } from '../core/bot/trigger-policy.js';
import type { Actor } from '../core/chat/chat-types.js';
import type { EphemeralView } from '../core/chat/thread-view.js';
import { OutboxWorker } from '../core/outbox/outbox-worker.js';
import type { OutboxLedger, OutboxOptions } from '../core/outbox/outbox-types.js';
import type { CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import { textIndexFor } from '../adapters/flexsearch/text-index.js';
import type { RecallOptions } from '../core/recall/recall.js';
import type { ChatTransport } from '../ports/chat-transport.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { LoopObserver } from '../ports/loop-observer.js';
import type { PeopleNames } from '../ports/people.js';
import type { Transcript } from '../ports/transcript.js';

/** A job scheduler as the loop runs it. */
export type Jobs = InvestigationJobsPort & { stop(): Promise<void>; idle(): Promise<void> };

/** The model's part, built before the loop (it connects to MCP servers): jobs are made for the loop's entrance. */
export interface ModelPart<J extends Jobs = Jobs> {
  /** Absent: no investigations here (a model that only answers thread questions). */
  jobs?(handle: (intent: Intent) => Promise<unknown>): J;
  /** `/reprise investigate <text>`. */
  command?: (text: string, actor: Actor) => Promise<EphemeralView>;
  /** The model that answers thread questions. */
  questionModel?: QuestionModel;
}

/** The forge's part: the curation worker, made for the loop's entrance, and the quality bar's floor. */
export interface CurationPart<W extends { kick(): void }> {
  worker(handle: (intent: Intent) => Promise<unknown>): W;
  minConfidence: number;
}

export interface LoopParts<W extends { kick(): void } = { kick(): void }, J extends Jobs = Jobs> {
  /** The ledger (a `Ledger`). */
  ledger: BotLedger & OutboxLedger;
  catalog: () => CatalogSnapshot;
  clock: Clock;
  logger: Logger;
  recall: RecallOptions;
  routing: Routing;
  /** The chat surfaces that run here (none offline: what they must show waits in the outbox). */
  transports?: ReadonlyMap<string, ChatTransport>;
  outbox?: Partial<OutboxOptions>;
  /** Checked before each chat send (replicas: this one holds the lease with margin). */
  mayDeliver?: () => boolean;
  policy?: TriggerPolicy;
  allow?: (actor: Actor) => boolean;
  linkFor?: (entryId: string) => string | undefined;
  uiLink?: (path: string) => string | undefined;
  notes?: NoteLimits;
  fixes?: FixOptions;
  questions?: QuestionOptions;
  /** A refusal in a thread is said to a person once in this window (default 10 min). */
  refusalWindowMs?: number;
  investigateAfterMs?: number;
  noise?: NoiseOptions;
  alertmanager?: AlertmanagerSilencer;
  /** PagerDuty's REST API (a chat ack acknowledges there too), when configured. */
  pagerDuty?: RepriseBotDeps['pagerDuty'];
  /** Who is on call (issue 32): the reminder's delay. */
  onCall?: RepriseBotDeps['onCall'];
  /** `/reprise oncall [route]`, when an on-call source is configured. */
  whoIsOnCall?: RepriseBotDeps['whoIsOnCall'];
  observer?: LoopObserver;
  /** Display names filled into views before each send (a cache: never waited for). */
  people?: PeopleNames;
  /** `REPRISE_TRANSCRIPT`: every message a surface took. */
  transcript?: Transcript;
  model?: ModelPart<J>;
  curation?: CurationPart<W>;
}

export interface Loop<W extends { kick(): void } = { kick(): void }, J extends Jobs = Jobs> {
  bot: RepriseBot;
  outbox: OutboxWorker;
  jobs?: J;
  curation?: W;
}

export function buildLoop<W extends { kick(): void } = { kick(): void }, J extends Jobs = Jobs>(p: LoopParts<W, J>): Loop<W, J> {
  const transports = p.transports ?? new Map<string, ChatTransport>();
  const outbox = new OutboxWorker({
    ledger: p.ledger,
    transports,
    clock: p.clock,
    logger: p.logger.child({ component: 'outbox' }),
    ...(p.outbox ? { options: p.outbox } : {}),
    ...(p.observer ? { observer: p.observer } : {}),
    ...(p.mayDeliver ? { mayDeliver: p.mayDeliver } : {}),
    ...(p.people ? { people: p.people } : {}),
    ...(p.transcript ? { transcript: p.transcript } : {}),
  });
  // Background work hands what it comes back with to the bot's one entrance (built just below).
  const handle = (intent: Intent): Promise<unknown> => bot.handle(intent);
  const jobs = p.model?.jobs?.(handle);
  const curation = p.curation?.worker(handle);
  const deps: RepriseBotDeps = {
    catalog: p.catalog,
    textIndex: textIndexFor(),
    ledger: p.ledger,
    clock: p.clock,
    logger: p.logger.child({ component: 'bot' }),
    recall: p.recall,
    routing: p.routing,
    surfaces: transports,
    outbox,
    ...(p.policy ? { policy: p.policy } : {}),
    ...(p.allow ? { allow: p.allow } : {}),
    ...(p.linkFor ? { linkFor: p.linkFor } : {}),
    ...(p.uiLink ? { uiLink: p.uiLink } : {}),
    ...(p.notes ? { notes: p.notes } : {}),
    ...(p.fixes ? { fixes: p.fixes } : {}),
    ...(p.questions ? { questions: p.questions } : {}),
    ...(p.refusalWindowMs !== undefined ? { refusalWindowMs: p.refusalWindowMs } : {}),
    ...(p.investigateAfterMs !== undefined ? { investigateAfterMs: p.investigateAfterMs } : {}),
    ...(p.noise ? { noise: p.noise } : {}),
    ...(p.alertmanager ? { alertmanager: p.alertmanager } : {}),
    ...(p.pagerDuty ? { pagerDuty: p.pagerDuty } : {}),
    ...(p.onCall ? { onCall: p.onCall } : {}),
    ...(p.whoIsOnCall ? { whoIsOnCall: p.whoIsOnCall } : {}),
    ...(p.observer ? { observer: p.observer } : {}),
    ...(jobs ? { jobs } : {}),
    ...(p.model?.command ? { investigate: p.model.command } : {}),
    ...(p.model?.questionModel ? { questionModel: p.model.questionModel } : {}),
    ...(curation && p.curation ? { curation, fileTimeCuration: { minConfidence: p.curation.minConfidence } } : {}),
  };
  const bot = new RepriseBot(deps);
  return { bot, outbox, ...(jobs ? { jobs } : {}), ...(curation ? { curation } : {}) };
}

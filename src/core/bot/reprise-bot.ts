import type { Logger } from '../../ports/logger.js';
import type { EphemeralView } from '../chat/thread-view.js';
import { recall, type RecallResult } from '../recall/recall.js';
import type { Incident } from '../types.js';
import { type Ctx, type Enqueued, type RepriseBotDeps } from './bot-context.js';
import { decide, type BotOutcome } from './decide.js';
import type { Effect } from './effects.js';
import type { Intent } from './intent.js';
import { silenceInAlertmanager } from './alertmanager-flow.js';
import type { AmSilenceRequest, PagerDutyAckRequest, QuestionAsk } from './effects.js';
import { backoffDelay } from '../backoff.js';
import { acknowledgeInPagerDuty } from './pagerduty-flow.js';

export type { RepriseBotDeps } from './bot-context.js';
export type { BotOutcome, IncidentOutcome } from './decide.js';

export interface HandleOptions {
  /** The idempotency key of the ledger transaction (see {@link RepriseBot.handle}). */
  txId?: string;
}

/** Intents decided between two yields to the event loop: a 10k-alert group must not starve /healthz. */
const YIELD_EVERY = 64;
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The loop's one entrance (SPEC §3): intents in, effects out. Every intent — a webhook's
 * firings and resolves, what a person meant in chat or on the CLI, a tick, Alertmanager's alert
 * list, a restart to resume from, what background work came back with — is decided by
 * {@link decide} against the ledger and recorded in **one** ledger transaction, with the messages
 * it calls for as outbox items. `handle` resolves once that is durable; the effects (model
 * jobs, Alertmanager calls, waking the outbox and the forge worker) run afterwards and are never
 * awaited by the caller, so no network call stands between an intent and its acknowledgement.
 */
export class RepriseBot {
  readonly #d: RepriseBotDeps;
  /** Background effects still running (Alertmanager silences, on-demand investigations). */
  readonly #background = new Set<Promise<void>>();
  /** Alertmanager silence requests being made now (a resume must not make them twice). */
  readonly #amInFlight = new Set<string>();
  /** PagerDuty calls being made now (one attempt at a time per request). */
  readonly #pdInFlight = new Set<string>();

  constructor(deps: RepriseBotDeps) {
    this.#d = deps;
  }

  /**
   * Decides `input` (one intent or several, in order) in one ledger transaction and resolves
   * with an outcome per intent once it is durable. When the write fails nothing is recorded,
   * no effect runs, and the promise rejects: the sender may retry safely.
   *
   * `opts.txId` names the transaction (an inbox item handed to the loop again after a crash or
   * a failover): one already recorded under that id writes nothing the second time.
   */
  async handle(input: Intent | readonly Intent[], opts: HandleOptions = {}): Promise<BotOutcome[]> {
    const intents: readonly Intent[] = Array.isArray(input) ? input : [input as Intent];
    const out: Enqueued = { count: 0 };
    const effects: Effect[] = [];
    const { result, first } = await this.#d.ledger.transaction(
      async (tx) => {
        const outcomes: BotOutcome[] = [];
        for (let i = 0; i < intents.length; i++) {
          if (i > 0 && i % YIELD_EVERY === 0) await yieldToLoop();
          const intent = intents[i]!;
          const c: Ctx = { d: this.#d, read: this.#d.ledger.read, tx, now: this.#d.clock.now(), log: this.#logFor(intent), out, effects };
          outcomes.push(decide(c, intent));
        }
        return outcomes;
      },
      opts.txId === undefined ? {} : { id: opts.txId },
    );
    // A recorded action says where its event landed, now that the transaction has.
    for (const o of result)
      if (o.status === 'recorded' && 'index' in o && o.index !== undefined) {
        o.seq = first + o.index;
        delete o.index;
      }
    if (out.count > 0) this.#d.outbox?.kick();
    this.#run(effects);
    return result;
  }

  /** Recall only: what the bot would answer, without recording or posting anything. */
  preview(incident: Incident): RecallResult {
    const now = this.#d.clock.now();
    return recall(incident, this.#d.catalog(), (id, kind) => this.#d.ledger.read.trackRecord(id, kind, now), this.#d.recall, now);
  }

  /** Resolves once background effects (Alertmanager silences, on-demand investigations) have finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#background.size > 0) await Promise.allSettled([...this.#background]);
  }

  #logFor(intent: Intent): Logger {
    if (intent.type === 'firing' || intent.type === 'resolve')
      return this.#d.logger.child({ incident: intent.incident.fingerprint, trigger: intent.incident.triggerKey });
    return this.#d.logger;
  }

  /** Runs what the durable decisions asked for; nothing here is awaited by the intent's sender. */
  #run(effects: readonly Effect[]): void {
    const { jobs, observer, curation } = this.#d;
    let curate = false;
    for (const e of effects) {
      try {
        switch (e.type) {
          case 'cancel_investigation':
            jobs?.cancel(e.fingerprint);
            break;
          case 'investigate':
            jobs?.start(e.job);
            break;
          case 'resume_investigation':
            if (jobs?.resume?.(e.job, e.resolved) && e.tally) e.tally.investigations += 1;
            break;
          case 'am_silence':
            if (this.#amSilence(e.req) && e.tally) e.tally.amSilences += 1;
            break;
          case 'investigate_text':
            this.#inBackground(this.#investigate(e));
            break;
          case 'oncall_text':
            this.#inBackground(this.#whoIsOnCall(e));
            break;
          case 'ask_question':
            this.#inBackground(this.#askQuestion(e.ask));
            break;
          case 'curate':
            curate = true;
            break;
          case 'recall_decided':
            observer?.recallDecided(e.decision);
            break;
          case 'investigation_ended':
            observer?.investigationEnded(e.end);
            break;
          case 'acknowledged':
            observer?.acknowledged?.(e.seconds);
            break;
          case 'pagerduty_ack':
            this.#pagerDutyAck(e.req);
            break;
        }
      } catch (err) {
        // One failing effect must not keep the others from running; what it was for is durable.
        this.#d.logger.error({ err, effect: e.type }, 'an effect failed to start');
      }
    }
    if (curate) curation?.kick();
  }

  #inBackground(p: Promise<void>): void {
    const tracked = p.catch((err: unknown) => this.#d.logger.error({ err }, 'background work failed'));
    this.#background.add(tracked);
    void tracked.finally(() => this.#background.delete(tracked));
  }

  /** Makes the Alertmanager silence a 🔕 asked for, then hands its outcome back to the loop. */
  #amSilence(req: AmSilenceRequest): boolean {
    if (this.#amInFlight.has(req.requestId)) return false;
    this.#amInFlight.add(req.requestId);
    const thread = this.#d.ledger.read.thread(req.openId);
    const firing = thread ? this.#d.ledger.read.firingAlerts(thread.triggerKey) : [];
    this.#inBackground(
      silenceInAlertmanager({ alertmanager: this.#d.alertmanager, logger: this.#d.logger, now: () => this.#d.clock.now() }, thread, req, firing)
        .then((outcome) => this.handle(outcome))
        .then(() => undefined)
        .finally(() => this.#amInFlight.delete(req.requestId)),
    );
    return true;
  }

  /** A thread question's one model call; what it came back with is handed to the loop, which records it and replies. */
  async #askQuestion(ask: QuestionAsk): Promise<void> {
    const model = this.#d.questionModel;
    if (!model) return;
    const back = { type: 'question_answered' as const, openId: ask.openId, triggerKey: ask.triggerKey, transport: ask.transport };
    const answered = await model.ask(ask.messages).then(
      (reply) => ({ ...back, reply }),
      (err: unknown) => {
        this.#d.logger.warn({ err, trigger: ask.triggerKey }, 'the model did not answer a thread question');
        return { ...back, error: err instanceof Error ? err.message : String(err) };
      },
    );
    await this.handle(answered);
  }

  /**
   * One attempt of a PagerDuty acknowledge an ack asked for, after its backoff wait; the outcome
   * is handed back to the loop (recorded, retried or said in the thread). Not configured: given up.
   */
  #pagerDutyAck(req: PagerDutyAckRequest): void {
    const pd = this.#d.pagerDuty;
    // Recorded here, made by the serving bot (its resume takes pending requests up).
    if (pd && !pd.port) return;
    if (this.#pdInFlight.has(req.requestId)) return;
    this.#pdInFlight.add(req.requestId);
    const wait = !pd || req.attempt <= 1 ? 0 : backoffDelay(pd.backoff, req.attempt - 1, { serverWaitMs: req.retryAfterMs, floorMs: pd.backoff.baseMs });
    const sleep = pd?.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref?.()));
    this.#inBackground(
      (wait > 0 ? sleep(wait) : Promise.resolve())
        .then(() =>
          pd?.port
            ? acknowledgeInPagerDuty({ pagerDuty: pd.port, maxAttempts: pd.maxAttempts, logger: this.#d.logger }, req)
            : {
                type: 'pagerduty_call_result' as const,
                req,
                outcome: 'failed' as const,
                detail: 'PagerDuty REST API not configured (pagerduty.token / REPRISE_PAGERDUTY_TOKEN)',
              },
        )
        .finally(() => this.#pdInFlight.delete(req.requestId))
        .then((outcome) => this.handle(outcome))
        .then(() => undefined),
    );
  }

  /** `/reprise oncall [route]`: who is on call (within the provider's budget), handed back to the loop as the command's answer. */
  async #whoIsOnCall(e: Extract<Effect, { type: 'oncall_text' }>): Promise<void> {
    const ask = this.#d.whoIsOnCall;
    if (!ask) return;
    const view = await ask(e.route, e.actor.via).catch(
      (err: unknown): EphemeralView => (
        this.#d.logger.error({ err }, 'who is on call could not be answered'),
        { kind: 'ephemeral', title: '📟 On call', body: [['on call: unknown (the lookup failed; see the logs)']] }
      ),
    );
    await this.handle({ type: 'answer', via: e.actor.via, replyTo: e.replyTo, view, eventId: e.eventId });
  }

  /** `/reprise investigate <text>`: the model's answer is handed back to the loop, which queues it for the asker. */
  async #investigate(e: Extract<Effect, { type: 'investigate_text' }>): Promise<void> {
    const run = this.#d.investigate;
    if (!run) return;
    const view = await run(e.text, e.actor).catch((err: unknown) => {
      this.#d.logger.error({ err }, 'on-demand investigation failed');
      return {
        kind: 'ephemeral' as const,
        title: 'Investigation failed',
        body: [[`the investigation could not finish: ${(err as Error).message.slice(0, 200)}`]],
      };
    });
    await this.handle({ type: 'answer', via: e.actor.via, replyTo: e.replyTo, view });
  }
}

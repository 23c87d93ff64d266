/**
 * The investigation engine's entry point (SPEC §6 backstops, §7): one call per incident,
 * independent of chat. With a recalled answer it confirms and verifies it first and falls
 * through to a full investigation when verify does not pass; without one it investigates.
 * Budgets, concurrency and the daily token budget are enforced here, every breach recorded.
 */
import { randomUUID } from 'node:crypto';
import type { ModelPort } from '../../ports/model.js';
import type { GateTraceStep, Incident } from '../types.js';
import { builtinTools } from './builtin-tools.js';
import { RunBudget, Semaphore, utcDay } from './budget.js';
import { confirm, confirmTrace } from './confirm.js';
import { degradedAnswer, partialFinding, recallFinding } from './answers.js';
import type { Finding, InvestigatorVersion } from './finding.js';
import type { InvestigationRequest, InvestigationResult, InvestigationStatus, InvestigatorDeps, RecallOutcome } from './investigation-types.js';
import { runLoop, type LoopProgress } from './loop.js';
import { emptyTally, type CallContext } from './model-call.js';
import { investigateMessages, PROMPT_HASH } from './prompts.js';
import { StepRecorder, type StepSink } from './step.js';
import { Toolbox, reasonText } from './toolbox.js';
import { verify, verifyTrace, type VerifyOutcome } from './verify.js';

export * from './investigation-types.js';

class Stop extends Error {
  constructor(
    readonly why: 'cancelled' | 'wall_time',
    message: string,
  ) {
    super(message);
  }
}

export class Investigator {
  readonly #d: InvestigatorDeps;
  readonly #slots: Semaphore;

  constructor(deps: InvestigatorDeps) {
    this.#d = deps;
    this.#slots = new Semaphore(deps.options.maxConcurrent);
  }

  /** The version a Finding names: model, prompt hash, allowlist. */
  get version(): InvestigatorVersion {
    return { model: this.#d.models.main.name, promptHash: PROMPT_HASH, allowlist: [...this.#d.options.tools.allow].sort() };
  }

  /**
   * Runs one investigation and resolves with its result; never rejects for the run's own
   * failures (they are statuses). Steps go to `sink` as they happen.
   */
  async run(req: InvestigationRequest, sink: StepSink): Promise<InvestigationResult> {
    const d = this.#d;
    const o = d.options;
    const id = req.id ?? randomUUID();
    const log = d.logger.child({ investigation: id, trigger: req.incident.triggerKey });
    const rec = new StepRecorder({
      run: id,
      clock: d.clock,
      sink,
      capBytes: o.stepCapBytes,
      secrets: o.secrets,
      onSinkError: (err) => log.warn({ err: reasonText(err) }, 'step sink failed'),
    });
    const tally = emptyTally();
    const trace: GateTraceStep[] = [];
    const started = d.clock.now();
    let queuedMs = 0;
    const result = (status: InvestigationStatus, detail: string, extra: Partial<InvestigationResult> = {}): InvestigationResult => ({
      id,
      status,
      detail,
      kind: 'fresh',
      finding: null,
      trace,
      usage: tally,
      steps: rec.steps,
      version: this.version,
      startedAt: started.toISOString(),
      endedAt: d.clock.now().toISOString(),
      queuedMs,
      ...extra,
    });

    const day = utcDay(started);
    let dailyLeft = Number.POSITIVE_INFINITY;
    if (o.dailyTokenBudget !== undefined) {
      const spent = await d.meter.spent(day);
      dailyLeft = o.dailyTokenBudget - spent;
      if (dailyLeft <= 0) {
        const detail = `daily token budget spent: ${spent} of ${o.dailyTokenBudget} tokens on ${day} (UTC); resets at midnight UTC`;
        await rec.note('skipped', detail);
        return result('skipped', detail, { reason: 'daily_budget' });
      }
    }
    if (req.signal?.aborted) {
      await rec.note('cancelled', 'cancelled before it started');
      return result('cancelled', 'cancelled before it started', { reason: 'cancelled' });
    }

    let release: () => void;
    const waitStart = performance.now();
    if (this.#slots.free === 0) {
      await rec.note('queued', `waiting for one of ${o.maxConcurrent} investigation slots`);
    }
    try {
      release = await this.#slots.acquire(req.signal);
    } catch {
      await rec.note('cancelled', 'cancelled while waiting for a slot');
      return result('cancelled', 'cancelled while waiting for a slot', { reason: 'cancelled' });
    }
    queuedMs = Math.round(performance.now() - waitStart);

    const ctl = new AbortController();
    const onCancel = (): void => ctl.abort(new Stop('cancelled', 'cancelled'));
    req.signal?.addEventListener('abort', onCancel, { once: true });
    const wall = setTimeout(() => ctl.abort(new Stop('wall_time', `wall time reached the ${o.wallTimeMs} ms budget`)), o.wallTimeMs);
    const budget = new RunBudget({ maxSteps: o.maxSteps, maxTokens: o.maxTokens, wallTimeMs: o.wallTimeMs }, d.clock, dailyLeft);
    const ctx: CallContext = { rec, prices: o.prices, tally, signal: ctl.signal, onUsage: (u) => budget.add(u) };
    const models = (m: ModelPort): ModelPort[] => (d.models.fallback && d.models.fallback.name !== m.name ? [m, d.models.fallback] : [m]);
    let recallOutcome: RecallOutcome | undefined;
    const progress: LoopProgress = { checked: [], outputs: [] };
    const { checked, outputs } = progress;

    try {
      await rec.note('started', `investigating ${req.incident.triggerKey}${req.recall ? ` with recalled entry ${req.recall.entry.id}` : ''}`);
      const catalog = d.catalog();
      const builtins = builtinTools({ catalog, findings: d.findings, incident: req.incident, ...(d.recurrence ? { recurrence: d.recurrence } : {}) });
      const toolbox = await Toolbox.open([...d.tools, builtins], o.tools);
      for (const p of toolbox.problems) await rec.note('started', p);

      if (req.recall) {
        const { entry } = req.recall;
        const conf = await confirm(req.incident, toolbox, o.tools.confirm, o.tools.reviewCapBytes, ctl.signal, rec);
        const capped = confirmTrace(entry.id, conf, req.recall.confidence, o.unconfirmedCap);
        trace.push(capped.step);
        await rec.note('confirm', capped.step.reason);
        const recalled = recallFinding(entry, capped.confidence, this.version);
        const v = await verify(req.incident, recalled, conf.evidence, models(d.models.verify), ctx, `recalled from catalog entry ${entry.id}`, 400);
        if (v.verdict === 'aborted') throw ctl.signal.reason;
        trace.push(verifyTrace(entry.id, v));
        await rec.note('verify', trace[trace.length - 1]!.reason);
        recallOutcome = { entry: entry.id, confidence: v.confidence, confirmed: conf.ran, verify: v, delivered: v.passed };
        if (v.passed) {
          const finding: Finding = {
            ...recalled,
            confidence: v.confidence,
            rootCauses: recalled.rootCauses.map((c) => ({ ...c, confidence: Math.min(c.confidence, v.confidence) })),
            verified: true,
          };
          await rec.note('recall', `recalled answer ${entry.id} delivered at ${v.confidence.toFixed(2)}`);
          return await this.#finish(
            result('completed', `recalled from ${entry.id}, confirmed and verified`, { kind: 'recall', finding, recall: recallOutcome }),
            req.incident,
            checked,
          );
        }
        // Fails closed: a reject, an error or an unusable review never lets the recall through.
        await rec.note('recall', `recalled answer ${entry.id} withdrawn (verify ${v.verdict}); running a full investigation`);
      }

      const start = investigateMessages(req.incident, toolbox.names, req.standing, d.clock.now(), req.storm);
      const loop = await runLoop(req.incident, start, {
        models: d.models,
        toolbox,
        budget,
        ctx,
        maxSteps: o.maxSteps,
        maxOutputTokens: o.maxOutputTokens,
        progress,
      });
      const extra = recallOutcome ? { recall: recallOutcome } : {};
      const end = loop.end;
      switch (end.kind) {
        case 'finding': {
          let finding: Finding = { ...end.finding, investigator: { ...this.version, model: end.model }, partial: end.forced };
          if (end.forced) {
            const detail = `the ${o.maxSteps}-step budget was reached; the model concluded on its last turn`;
            await rec.note('budget', detail);
            return await this.#finish(result('exhausted', detail, { reason: 'max_steps', finding, ...extra }), req.incident, checked);
          }
          let fresh: VerifyOutcome | undefined;
          const spent = budget.breach();
          if (spent && finding.rootCauses.length > 0) {
            await rec.note('verify', `verify skipped: ${spent.detail}`);
            finding = { ...finding, verified: false };
          } else if (finding.rootCauses.length > 0) {
            fresh = await verify(
              req.incident,
              finding,
              reviewEvidence(outputs, o.tools.reviewCapBytes),
              models(d.models.verify),
              ctx,
              'from a fresh investigation',
              400,
            );
            if (fresh.verdict === 'aborted') throw ctl.signal.reason;
            trace.push(verifyTrace(null, fresh));
            await rec.note('verify', trace[trace.length - 1]!.reason);
            finding = applyReview(finding, fresh);
          }
          await rec.note('completed', `concluded: ${finding.verdict} at ${finding.confidence.toFixed(2)}`);
          return await this.#finish(result('completed', finding.summary, { finding, ...(fresh ? { verify: fresh } : {}), ...extra }), req.incident, checked);
        }
        case 'exhausted': {
          await rec.note('budget', end.breach.detail);
          const finding: Finding = { ...partialFinding(end.breach.detail, checked), investigator: this.version, partial: true };
          return await this.#finish(result('exhausted', end.breach.detail, { reason: end.breach.reason, finding, ...extra }), req.incident, checked);
        }
        case 'degraded': {
          await rec.note('degraded', end.detail);
          const degraded = await degradedAnswer(req.incident, catalog, d.recurrence, end.detail);
          return result('degraded', end.detail, { reason: end.reason, degraded, ...extra });
        }
        default:
          await rec.note('failed', end.detail);
          return result('failed', end.detail, { reason: end.reason, ...extra });
      }
    } catch (err) {
      const stop = ctl.signal.aborted ? (ctl.signal.reason as unknown) : err;
      const extra = recallOutcome ? { recall: recallOutcome } : {};
      if (stop instanceof Stop && stop.why === 'wall_time') {
        await rec.note('budget', stop.message);
        const finding: Finding = { ...partialFinding(stop.message, checked), investigator: this.version, partial: true };
        return result('exhausted', stop.message, { reason: 'wall_time', finding, ...extra });
      }
      if (stop instanceof Stop) {
        await rec.note('cancelled', 'cancelled while running');
        return result('cancelled', 'cancelled while running', { reason: 'cancelled', ...extra });
      }
      log.error({ err: reasonText(err) }, 'investigation failed');
      await rec.note('failed', `internal error: ${reasonText(err)}`);
      return result('failed', `internal error: ${reasonText(err)}`, { reason: 'internal', ...extra });
    } finally {
      clearTimeout(wall);
      req.signal?.removeEventListener('abort', onCancel);
      release();
      if (tally.input + tally.output > 0) await d.meter.add(day, tally.input + tally.output);
    }
  }

  /** Keeps the Finding for `prior_findings` of later runs. */
  async #finish(r: InvestigationResult, incident: Incident, checked: readonly string[]): Promise<InvestigationResult> {
    if (r.finding) {
      const top = r.finding.rootCauses[0];
      await this.#d.findings.add({
        triggerKey: incident.triggerKey,
        at: r.endedAt,
        summary: r.finding.summary,
        verdict: r.finding.verdict,
        confidence: r.finding.confidence,
        ...(top ? { topCause: top.cause } : {}),
        checked,
        ...(r.recall?.delivered ? { entry: r.recall.entry } : {}),
      });
    }
    return r;
  }
}

/** Tool output the fresh-path reviewer sees, newest first, within the cap. */
function reviewEvidence(outputs: ReadonlyArray<{ tool: string; text: string }>, capBytes: number): Array<{ tool: string; text: string }> {
  const out: Array<{ tool: string; text: string }> = [];
  let left = capBytes;
  for (const o of [...outputs].reverse()) {
    if (left <= 0) break;
    const text = Buffer.from(o.text, 'utf8').subarray(0, left).toString('utf8');
    out.push({ tool: o.tool, text });
    left -= Buffer.byteLength(text);
  }
  return out;
}

/** The fresh path's review only lowers confidence and marks the Finding verified or not. */
function applyReview(f: Finding, v: VerifyOutcome): Finding {
  if (v.verdict === 'error' || v.verdict === 'unusable' || v.verdict === 'no_usage') return { ...f, verified: false };
  const cap = (n: number): number => Math.min(n, v.confidence);
  return { ...f, confidence: cap(f.confidence), rootCauses: f.rootCauses.map((c) => ({ ...c, confidence: cap(c.confidence) })), verified: v.passed };
}

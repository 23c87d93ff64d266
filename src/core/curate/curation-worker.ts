/**
 * The curation worker (SPEC §9 notes, §10 file-time curation): performs the forge work the
 * ledger holds as `curate` intents and records each outcome as `curated`, with what the thread
 * is told (a card update for a Finding, a reply for a note) as outbox items in the same
 * transaction. Items go one at a time — two drafts of one finding must not race past each
 * other's dedup — oldest first, under a forge-writes-per-hour budget. A forge or git failure
 * that may pass is retried with backoff (the forge's reset time wins) across restarts, since
 * pending intents are part of the replayed read model; a refusal for good is recorded with its
 * reason and the run goes on. Nothing accepted is dropped silently.
 */
import type { LedgerReader } from '../ledger/ledger-reader.js';
import type { Clock, Timer } from '../../ports/clock.js';
import { ForgeError, type DraftBranchPort, type ForgePort } from '../../ports/forge.js';
import type { Logger } from '../../ports/logger.js';
import type { PeopleDirectory } from '../../ports/people.js';
import { namesInText, peopleMentioned, personFromKey } from '../people.js';
import type { CurationResult } from '../bot/curation-flow.js';
import type { CurateItem } from '../ledger/ledger-types.js';
import type { CatalogSnapshot } from '../recall/catalog-snapshot.js';
import { CountingForge, fileFinding, fileFix, filePostmortem, fileNote, type FilingDeps, type Outcome } from './file-item.js';
import { backoffDelay } from '../backoff.js';

export interface CurationLedger {
  read: Pick<LedgerReader, 'pendingCurate'>;
}

export interface CurationOptions {
  /** Labels on every draft PR. */
  labels: readonly string[];
  /** A catalog entry scoring at least this (BM25) against the finding is the same knowledge. */
  dupScore: number;
  /** Forge write calls (PRs, comments, labels) allowed per rolling hour. */
  writesPerHour: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** An intent still unsettled this long after it was recorded is given up (recorded as failed). */
  maxAgeMs: number;
  /** Catalog neighbours listed under "Related knowledge". */
  neighbours: number;
  /** The catalog's folder in the repository (`catalog.git.path`): where an entry edit finds the file. */
  catalogPath?: string;
}

export const DEFAULT_CURATION_OPTIONS: CurationOptions = {
  labels: ['reprise', 'kb-draft'],
  dupScore: 8,
  writesPerHour: 30,
  baseDelayMs: 30_000,
  maxDelayMs: 30 * 60_000,
  maxAgeMs: 7 * 86_400_000,
  neighbours: 5,
};

interface Attempt {
  n: number;
  nextAt: number;
  lastError: string;
  told: boolean;
}

export class CurationWorker {
  readonly #ledger: CurationLedger;
  readonly #forge: ForgePort;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #opts: CurationOptions;
  readonly #handle: (intent: CurationResult) => Promise<unknown>;
  readonly #filing: FilingDeps;
  readonly #people: PeopleDirectory | undefined;
  readonly #attempts = new Map<string, Attempt>();
  readonly #writes: number[] = [];
  #timer: Timer | undefined;
  #stopped = true;
  #again = false;
  #pass: Promise<void> = Promise.resolve();
  #budgetLogged = false;

  constructor(deps: {
    ledger: CurationLedger;
    forge: ForgePort;
    drafts: DraftBranchPort;
    catalog: () => CatalogSnapshot;
    clock: Clock;
    logger: Logger;
    options?: Partial<CurationOptions>;
    /** The loop's entrance: each outcome is handed back to it, recorded and said in the thread there. */
    handle: (intent: CurationResult) => Promise<unknown>;
    /** Display names for the people a PR body or postmortem names: looked up (bounded) before each is written. */
    people?: PeopleDirectory;
  }) {
    this.#people = deps.people;
    this.#ledger = deps.ledger;
    this.#forge = deps.forge;
    this.#clock = deps.clock;
    this.#log = deps.logger;
    this.#opts = { ...DEFAULT_CURATION_OPTIONS, ...deps.options };
    this.#handle = deps.handle;
    this.#filing = { forge: deps.forge, drafts: deps.drafts, catalog: deps.catalog, options: this.#opts, ...(deps.people ? { names: deps.people } : {}) };
  }

  start(): void {
    this.#stopped = false;
    this.kick();
  }

  /** Something was recorded (or time passed): run a pass soon. Kicks coalesce. */
  kick(): void {
    if (this.#stopped) return;
    this.#again = true;
    // A pass that throws must not end the worker: the next kick runs again.
    this.#pass = this.#pass
      .then(() => this.#run())
      .catch((err: unknown) => {
        this.#log.error({ err }, 'curation pass failed; pending work stays recorded and is retried');
        this.#retryLater(this.#opts.baseDelayMs);
      });
  }

  #retryLater(ms: number): void {
    if (this.#stopped || this.#timer) return;
    this.#timer = this.#clock
      .setTimeout(() => {
        this.#timer = undefined;
        this.kick();
      }, ms)
      .unref();
  }

  /** Resolves when the passes asked for so far are done (tests, shutdown). */
  async idle(): Promise<void> {
    let p: Promise<void>;
    do {
      p = this.#pass;
      await p;
    } while (p !== this.#pass);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#clock.clearTimeout(this.#timer);
    await this.#pass;
  }

  /** Unsettled intents and how many are waiting for a retry (readiness detail, metrics). */
  status(): { pending: number; retrying: number } {
    let retrying = 0;
    for (const a of this.#attempts.values()) if (a.n > 0) retrying++;
    return { pending: this.#ledger.read.pendingCurate().length, retrying };
  }

  #budgetLeft(now: number): number {
    while (this.#writes.length > 0 && this.#writes[0]! <= now - 3_600_000) this.#writes.shift();
    return this.#opts.writesPerHour - this.#writes.length;
  }

  async #run(): Promise<void> {
    if (this.#stopped || !this.#again) return;
    this.#again = false;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    let nextWake = Number.POSITIVE_INFINITY;
    for (const item of this.#ledger.read.pendingCurate()) {
      if (this.#stopped) return;
      const now = this.#clock.now().getTime();
      const attempt = this.#attempts.get(item.id);
      if (attempt && attempt.nextAt > now) {
        nextWake = Math.min(nextWake, attempt.nextAt);
        continue;
      }
      const age = now - Date.parse(item.at);
      if (Number.isFinite(age) && age > this.#opts.maxAgeMs) {
        await this.#settle(item, { decision: 'failed', detail: `gave up after ${Math.round(age / 3_600_000)} h${attempt ? `: ${attempt.lastError}` : ''}` });
        continue;
      }
      // Drafting a finding costs up to 3 writes (PR, labels, or a comment); a note at most 2.
      if (this.#budgetLeft(now) < 2) {
        if (!this.#budgetLogged)
          this.#log.warn(
            { writesPerHour: this.#opts.writesPerHour, pending: this.#ledger.read.pendingCurate().length },
            'forge write budget spent for this hour; curation waits',
          );
        this.#budgetLogged = true;
        nextWake = Math.min(nextWake, this.#writes[0]! + 3_600_000 + 1);
        break;
      }
      this.#budgetLogged = false;
      await this.#one(item);
    }
    if (Number.isFinite(nextWake)) this.#retryLater(Math.max(10, nextWake - this.#clock.now().getTime()));
  }

  /**
   * The item with the display names of the people it names, as far as the directory can say in
   * its bounded wait (a failed lookup leaves the id): a PR body says "from Ann Example", not "U0ANN".
   */
  async #named(item: CurateItem): Promise<CurateItem> {
    const people = this.#people;
    if (!people) return item;
    const who = [item.fix, item.note, item.postmortem, ...(item.postmortem?.said ?? [])].flatMap((x) =>
      x ? [personFromKey(x.user, 'via' in x && typeof x.via === 'string' ? x.via : undefined)] : [],
    );
    // …and the people their words name by id (`thanks <@U0BOB>` arrives as `thanks @U0BOB`).
    const mentioned = [item.fix, item.note].flatMap((x) => (x ? peopleMentioned(x.text, x.via) : []));
    // The trigger's earlier fixes (the entry's "What has fixed it" list): their people by id, and whom their words name.
    const outcomes = item.fix?.outcomes ?? [];
    const earlier = outcomes.flatMap((o) => [{ via: o.via, id: o.name }, ...peopleMentioned(o.text, o.via)]);
    await people.resolve([...who, ...mentioned, ...earlier]);
    const rename = <T extends { user: string; name: string; via: string; text: string }>(x: T): T => {
      const name = people.nameOf(personFromKey(x.user, x.via));
      const text = namesInText(x.text, x.via, people);
      return name || text !== x.text ? { ...x, ...(name ? { name } : {}), text } : x;
    };
    const fix = item.fix
      ? {
          ...rename(item.fix),
          ...(item.fix.outcomes
            ? {
                outcomes: item.fix.outcomes.map((o) => ({
                  ...o,
                  name: people.nameOf({ via: o.via, id: o.name }) ?? o.name,
                  text: namesInText(o.text, o.via, people),
                })),
              }
            : {}),
        }
      : undefined;
    return { ...item, ...(fix ? { fix } : {}), ...(item.note ? { note: rename(item.note) } : {}) };
  }

  async #one(queued: CurateItem): Promise<void> {
    const forge = new CountingForge(this.#forge);
    const item = await this.#named(queued);
    let outcome: Outcome;
    try {
      outcome =
        item.subject === 'finding'
          ? await fileFinding(this.#filing, item, forge)
          : item.subject === 'fix'
            ? await fileFix(this.#filing, item, forge)
            : item.subject === 'postmortem'
              ? await filePostmortem(this.#filing, item, forge)
              : await fileNote(this.#filing, item, forge);
    } catch (err) {
      this.#spend(forge.writes);
      await this.#failed(item, err);
      return;
    }
    this.#spend(forge.writes);
    this.#attempts.delete(item.id);
    await this.#settle(item, outcome);
  }

  #spend(writes: number): void {
    const now = this.#clock.now().getTime();
    for (let i = 0; i < writes; i++) this.#writes.push(now);
  }

  async #failed(item: CurateItem, err: unknown): Promise<void> {
    const message = (err instanceof Error ? err.message : String(err)).slice(0, 400);
    if (err instanceof ForgeError && !err.retryable) {
      this.#log.error(
        { curateId: item.id, subject: item.subject, trigger: item.triggerKey, status: err.status, err: message },
        'forge refused a curation item for good; skipped',
      );
      this.#attempts.delete(item.id);
      await this.#settle(item, { decision: 'failed', detail: message });
      return;
    }
    const prev = this.#attempts.get(item.id);
    const n = (prev?.n ?? 0) + 1;
    const now = this.#clock.now().getTime();
    // The forge's reset wins (at least a second on, so a reset already past does not spin).
    const at =
      now +
      backoffDelay({ baseMs: this.#opts.baseDelayMs, maxMs: this.#opts.maxDelayMs }, n, {
        serverWaitMs: err instanceof ForgeError && err.retryAt ? err.retryAt.getTime() - now : undefined,
        floorMs: 1000,
      });
    const attempt: Attempt = { n, nextAt: at, lastError: message, told: prev?.told ?? false };
    this.#attempts.set(item.id, attempt);
    this.#log.warn(
      { curateId: item.id, subject: item.subject, trigger: item.triggerKey, attempt: n, retryInMs: at - now, err: message },
      'curation item failed; kept and will retry',
    );
    if (item.subject !== 'finding' && !attempt.told) {
      attempt.told = true;
      await this.#handle({ type: 'curation_retrying', item, message }).catch((e: unknown) => this.#log.error({ err: e }, 'recording the retry notice failed'));
    }
  }

  /** Hands the outcome to the loop, which records it with what the thread is told, in one transaction. */
  async #settle(item: CurateItem, outcome: Outcome): Promise<void> {
    try {
      await this.#handle({ type: 'curation_result', item, outcome });
    } catch (err) {
      // Not recorded: the intent stays pending and is performed again (markers keep that idempotent).
      this.#log.error({ err, curateId: item.id }, 'recording a curation outcome failed; it will be redone');
      this.#attempts.set(item.id, { n: 1, nextAt: this.#clock.now().getTime() + this.#opts.baseDelayMs, lastError: 'ledger write failed', told: true });
    }
  }
}

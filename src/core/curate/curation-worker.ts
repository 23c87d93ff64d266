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
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../ports/clock.js';
import { ForgeError, type DraftBranchPort, type ForgePort, type ForgePullRequest } from '../../ports/forge.js';
import type { Logger } from '../../ports/logger.js';
import { enqueue, type BotLedger, type BotTx, type Enqueued, type ThreadInfo } from '../bot/bot-context.js';
import type { NoticeView, RichText } from '../chat/thread-view.js';
import type { CuratedEvent } from '../ledger-events.js';
import type { CurateItem } from '../ledger/ledger-types.js';
import type { CatalogSnapshot } from '../recall/catalog-snapshot.js';
import { tokenize } from '../tokenize.js';
import { curationLine } from './curation-line.js';
import { findingPrBody, noteComment, notePrBody, seenAgainComment, type Neighbour } from './forge-text.js';
import { renderFindingEntry, renderNoteEntry } from './kb-entry.js';
import { hasMarker } from './markers.js';

export interface CurationLedger {
  /** Unsettled intents, oldest first. */
  pending(): CurateItem[];
  thread(openId: string): ThreadInfo | undefined;
  transaction: BotLedger['transaction'];
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
}

export const DEFAULT_CURATION_OPTIONS: CurationOptions = { labels: ['reprise', 'kb-draft'], dupScore: 8, writesPerHour: 30, baseDelayMs: 30_000, maxDelayMs: 30 * 60_000, maxAgeMs: 7 * 86_400_000, neighbours: 5 };

type Outcome = Omit<CuratedEvent, 'type' | 'id' | 'subject' | 'openId' | 'triggerKey' | 'at'>;

interface Attempt {
  n: number;
  nextAt: number;
  lastError: string;
  told: boolean;
}

/** Counts forge write calls, so one item's cost is known before the budget is spent. */
class CountingForge {
  writes = 0;
  constructor(readonly f: ForgePort) {}
  comment(n: number, body: string) {
    this.writes++;
    return this.f.comment(n, body);
  }
  createPullRequest(pr: Parameters<ForgePort['createPullRequest']>[0]) {
    this.writes += pr.labels && pr.labels.length > 0 ? 2 : 1;
    return this.f.createPullRequest(pr);
  }
}

export class CurationWorker {
  readonly #ledger: CurationLedger;
  readonly #forge: ForgePort;
  readonly #drafts: DraftBranchPort;
  readonly #catalog: () => CatalogSnapshot;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #opts: CurationOptions;
  readonly #outbox: { kick(): void } | undefined;
  readonly #attempts = new Map<string, Attempt>();
  readonly #writes: number[] = [];
  #timer: NodeJS.Timeout | undefined;
  #stopped = true;
  #again = false;
  #pass: Promise<void> = Promise.resolve();
  #budgetLogged = false;

  constructor(deps: { ledger: CurationLedger; forge: ForgePort; drafts: DraftBranchPort; catalog: () => CatalogSnapshot; clock: Clock; logger: Logger; options?: Partial<CurationOptions>; outbox?: { kick(): void } }) {
    this.#ledger = deps.ledger;
    this.#forge = deps.forge;
    this.#drafts = deps.drafts;
    this.#catalog = deps.catalog;
    this.#clock = deps.clock;
    this.#log = deps.logger;
    this.#opts = { ...DEFAULT_CURATION_OPTIONS, ...deps.options };
    this.#outbox = deps.outbox;
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
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.kick();
    }, ms);
    this.#timer.unref();
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
    if (this.#timer) clearTimeout(this.#timer);
    await this.#pass;
  }

  /** Unsettled intents and how many are waiting for a retry (readiness detail, metrics). */
  status(): { pending: number; retrying: number } {
    let retrying = 0;
    for (const a of this.#attempts.values()) if (a.n > 0) retrying++;
    return { pending: this.#ledger.pending().length, retrying };
  }

  #budgetLeft(now: number): number {
    while (this.#writes.length > 0 && this.#writes[0]! <= now - 3_600_000) this.#writes.shift();
    return this.#opts.writesPerHour - this.#writes.length;
  }

  async #run(): Promise<void> {
    if (this.#stopped || !this.#again) return;
    this.#again = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    let nextWake = Number.POSITIVE_INFINITY;
    for (const item of this.#ledger.pending()) {
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
        if (!this.#budgetLogged) this.#log.warn({ writesPerHour: this.#opts.writesPerHour, pending: this.#ledger.pending().length }, 'forge write budget spent for this hour; curation waits');
        this.#budgetLogged = true;
        nextWake = Math.min(nextWake, this.#writes[0]! + 3_600_000 + 1);
        break;
      }
      this.#budgetLogged = false;
      await this.#one(item);
    }
    if (Number.isFinite(nextWake)) this.#retryLater(Math.max(10, nextWake - this.#clock.now().getTime()));
  }

  async #one(item: CurateItem): Promise<void> {
    const forge = new CountingForge(this.#forge);
    let outcome: Outcome;
    try {
      outcome = item.subject === 'finding' ? await this.#finding(item, forge) : await this.#note(item, forge);
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
      this.#log.error({ curateId: item.id, subject: item.subject, trigger: item.triggerKey, status: err.status, err: message }, 'forge refused a curation item for good; skipped');
      this.#attempts.delete(item.id);
      await this.#settle(item, { decision: 'failed', detail: message });
      return;
    }
    const prev = this.#attempts.get(item.id);
    const n = (prev?.n ?? 0) + 1;
    const now = this.#clock.now().getTime();
    const backoff = Math.min(this.#opts.maxDelayMs, this.#opts.baseDelayMs * 2 ** (n - 1));
    const at = err instanceof ForgeError && err.retryAt ? Math.max(err.retryAt.getTime(), now + 1000) : now + backoff;
    const attempt: Attempt = { n, nextAt: at, lastError: message, told: prev?.told ?? false };
    this.#attempts.set(item.id, attempt);
    this.#log.warn({ curateId: item.id, subject: item.subject, trigger: item.triggerKey, attempt: n, retryInMs: at - now, err: message }, 'curation item failed; kept and will retry');
    if (item.subject === 'note' && !attempt.told) {
      attempt.told = true;
      const name = item.note?.name ?? 'someone';
      await this.#tell(item, (tx, out, thread) => this.#reply(tx, out, thread, '⏳', [`note from @${name} kept: the knowledge base forge is not reachable right now (${message.slice(0, 160)}); it will be filed when it is back`])).catch((e: unknown) =>
        this.#log.error({ err: e }, 'recording the retry notice failed'),
      );
    }
  }

  /** Records the outcome and what the thread is told, in one transaction. */
  async #settle(item: CurateItem, outcome: Outcome): Promise<void> {
    const event: CuratedEvent = { type: 'curated', id: item.id, subject: item.subject, openId: item.openId, triggerKey: item.triggerKey, ...outcome, at: this.#clock.now().toISOString() };
    try {
      await this.#tell(item, (tx, out, thread) => {
        tx.record(event);
        if (!thread) return;
        if (item.subject === 'finding') {
          const line = curationLine(outcome);
          for (const transport of thread.transports) enqueue(tx, this.#clock.now(), { transport, op: 'update', openId: thread.openId, view: { kind: 'card_patch', curation: line } }, out);
          return;
        }
        this.#reply(tx, out, thread, outcome.decision === 'failed' ? '⚠️' : '📝', noteNotice(item.note?.name ?? 'someone', outcome));
      });
      this.#log.info({ curateId: item.id, subject: item.subject, trigger: item.triggerKey, decision: outcome.decision, detail: outcome.detail, url: outcome.url }, `curation: ${outcome.decision}`);
    } catch (err) {
      // Not recorded: the intent stays pending and is performed again (markers keep that idempotent).
      this.#log.error({ err, curateId: item.id }, 'recording a curation outcome failed; it will be redone');
      this.#attempts.set(item.id, { n: 1, nextAt: this.#clock.now().getTime() + this.#opts.baseDelayMs, lastError: 'ledger write failed', told: true });
    }
  }

  async #tell(item: CurateItem, fn: (tx: BotTx, out: Enqueued, thread: ThreadInfo | undefined) => void): Promise<void> {
    const out: Enqueued = { count: 0 };
    await this.#ledger.transaction(async (tx) => fn(tx, out, this.#ledger.thread(item.openId)));
    if (out.count > 0) this.#outbox?.kick();
  }

  #reply(tx: BotTx, out: Enqueued, thread: ThreadInfo | undefined, icon: string, text: RichText): void {
    if (!thread) return;
    const view: NoticeView = { kind: 'notice', topic: 'note', icon, text };
    for (const transport of thread.transports) enqueue(tx, this.#clock.now(), { transport, op: 'reply', openId: thread.openId, view }, out);
  }

  /** Catalog dedup: the same fingerprint, or an entry scoring at least `dupScore`; plus the neighbourhood. */
  #catalogDup(item: CurateItem): { dup?: string; neighbours: Neighbour[] } {
    const d = item.draft!;
    const snap = this.#catalog();
    const same = snap.entries.find((e) => e.fingerprint === item.dupFingerprint && e.status !== 'retired');
    const tokens = tokenize([d.alertname, d.resource ?? '', d.title, d.summary, d.causes[0]?.cause ?? ''].join(' '));
    const hits = tokens.length > 0 ? snap.index.search(tokens, this.#opts.neighbours) : [];
    const neighbours = hits.map((h) => ({ entry: h.entry.id, title: h.entry.title, score: h.score }));
    if (same) return { dup: `${same.id} (same fingerprint)`, neighbours };
    // Similar text about another workload is a neighbour, not the same knowledge.
    const sameSubject = (e: (typeof hits)[number]['entry']): boolean =>
      d.resource ? e.resource?.raw === d.resource || e.alertResource?.raw === d.resource : !e.resource && e.alerts.includes(d.alertname.toLowerCase());
    const top = hits.find((h) => h.entry.status !== 'retired' && sameSubject(h.entry));
    if (top && top.score >= this.#opts.dupScore) return { dup: `${top.entry.id} (score ${top.score.toFixed(1)} ≥ ${this.#opts.dupScore})`, neighbours };
    return { neighbours };
  }

  async #finding(item: CurateItem, forge: CountingForge): Promise<Outcome> {
    const d = item.draft;
    if (!d) return { decision: 'failed', detail: 'the intent carries no draft material' };
    const { dup, neighbours } = this.#catalogDup(item);
    if (dup) return { decision: 'duplicate_entry', detail: dup };
    const entry = renderFindingEntry(d, item.dupFingerprint, new Date(item.at));
    const open = await this.#forge.listPullRequests('open');
    const same = open.find((pr) => hasMarker(pr.body, 'dup', item.dupFingerprint));
    if (same) {
      // Our own PR from an attempt whose outcome was not recorded: it is this item's draft.
      if (hasMarker(same.body, 'seen', item.openId)) return pr('novel', same);
      const comments = await this.#forge.listComments(same.number);
      if (!comments.some((c) => hasMarker(c.body, 'seen', item.openId))) await forge.comment(same.number, seenAgainComment(d, item.openId));
      return pr('duplicate_pr', same);
    }
    const closed = await this.#forge.listPullRequests('closed');
    const mine = closed.filter((p) => hasMarker(p.body, 'dup', item.dupFingerprint));
    const merged = mine.find((p) => p.merged);
    if (merged) return { decision: 'duplicate_entry', detail: `merged as PR #${merged.number}; the catalog has not synced it yet`, url: merged.url, number: merged.number };
    const rejected = mine.find((p) => !p.merged);
    if (rejected) return pr('suppressed', rejected);
    await this.#drafts.push({ branch: entry.branch, path: entry.path, content: entry.content, message: `KB: ${entry.title}` });
    const created = await forge.createPullRequest({
      title: `KB: ${entry.title}`,
      body: findingPrBody(d, { dupFingerprint: item.dupFingerprint, openId: item.openId, triggerKey: item.triggerKey, path: entry.path, neighbours }),
      head: entry.branch,
      labels: this.#opts.labels,
    });
    return pr('novel', created);
  }

  async #note(item: CurateItem, forge: CountingForge): Promise<Outcome> {
    const note = item.note;
    if (!note) return { decision: 'failed', detail: 'the intent carries no note' };
    const text = { id: item.id, name: note.name, via: note.via, text: note.text, ...(note.finding ? { finding: note.finding } : {}) };
    const open = await this.#forge.listPullRequests('open');
    const fp = item.dupFingerprint;
    const target = fp ? (open.find((p) => hasMarker(p.body, 'dup', fp)) ?? open.find((p) => hasMarker(p.body, 'notes', fp))) : undefined;
    if (target) {
      const comments = await this.#forge.listComments(target.number);
      const existing = comments.find((c) => hasMarker(c.body, 'note', item.id));
      const c = existing ?? (await forge.comment(target.number, noteComment(text)));
      return { decision: 'pr_comment', url: c.url || target.url, number: target.number };
    }
    const already = open.find((p) => hasMarker(p.body, 'note', item.id));
    if (already) return pr('concept_pr', already);
    const [alertname = 'alert', namespace, , name] = item.triggerKey.split('|');
    const resource = namespace && name ? `${namespace}/${name}` : undefined;
    const entry = renderNoteEntry(note, { alertname, ...(resource ? { resource } : {}) }, item.id.replace(/[^0-9a-f]/g, '') || randomUUID().replace(/-/g, ''), new Date(item.at));
    await this.#drafts.push({ branch: entry.branch, path: entry.path, content: entry.content, message: `KB: ${entry.title}` });
    const created = await forge.createPullRequest({ title: `KB: ${entry.title}`, body: notePrBody(text, { dupFingerprint: fp, triggerKey: item.triggerKey, path: entry.path }), head: entry.branch, labels: [...this.#opts.labels, 'operator-note'] });
    return pr('concept_pr', created);
  }
}

function pr(decision: Outcome['decision'], p: ForgePullRequest): Outcome {
  return { decision, url: p.url, number: p.number };
}

/** What the thread is told about a note (SPEC §9: "📝 note filed as a comment on PR #12"). */
export function noteNotice(name: string, o: Outcome): RichText {
  const link = o.url && o.number !== undefined ? [{ link: { url: o.url, label: `PR #${o.number}` } }] : [];
  if (o.decision === 'pr_comment') return [`note from @${name} filed as a comment on `, ...link];
  if (o.decision === 'concept_pr') return [`note from @${name} filed as a new Concept entry for review: `, ...link];
  return [`note from @${name} could not be filed on the forge: ${o.detail ?? 'unknown error'}; it stays recorded with this incident`];
}

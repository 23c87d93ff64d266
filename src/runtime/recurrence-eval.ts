/**
 * `reprise eval recurrence` (issue 31 item 4): replays incident histories through the real bot
 * path in this process (the one entrance, a fresh in-memory ledger per history, no model) and
 * measures what on-call would read on the later cards:
 *
 * - **seen before**: the later card (another pod, host, replica, another wording) carries the
 *   "Seen before" block and it quotes the first occurrence's fix;
 * - **instant recall after the merge**: with the Incident entry added to the catalog as the
 *   curator drafts it from that fix, the later card answers from that entry at once;
 * - **false seen before**: unrelated alerts, fired into the same ledger, carry no history.
 */
import { createStore } from '../adapters/keyv/keyv-store.js';
import { parseAlertmanagerPayload } from '../core/alertmanager.js';
import { parseEntry } from '../core/catalog/parse-entry.js';
import { incidentIntents } from '../core/bot/intent.js';
import { Routing } from '../core/bot/routing.js';
import { dupFingerprint } from '../core/bot/dup-fingerprint.js';
import { openAlert } from '../core/bot/fix-flow.js';
import { asRichText, richText, type CardView } from '../core/chat/thread-view.js';
import type { MessageRef } from '../core/chat/chat-types.js';
import { renderFixEntry } from '../core/curate/fix-entry.js';
import { Ledger } from '../core/ledger/ledger.js';
import type { LedgerEvent } from '../core/ledger-events.js';
import { buildCatalogSnapshot, type CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import type { RecallOptions } from '../core/recall/recall.js';
import { PostingsIndex } from '../core/search/postings-index.js';
import type { Entry, Incident } from '../core/types.js';
import { ManualClock } from '../ports/clock.js';
import { silentLogger } from '../ports/logger.js';
import type { ChatTransport } from '../ports/chat-transport.js';
import { buildLoop } from './build-loop.js';

/** One alert of a history, as Alertmanager sends it (labels, annotations) and how long it lasts. */
export interface HistoryAlert {
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  startsAt: string;
  /** Minutes until its resolve; absent: it is still firing when the next alert comes. */
  minutes?: number;
}

export interface History {
  id: string;
  /** What the history is about (a pod, a host, a replica, a wording). */
  about: string;
  first: HistoryAlert;
  /** The person who fixed it, and what they said. */
  fix: { by: string; text: string };
  /** Later occurrences that are the same problem: each should show the first one's fix. */
  later: HistoryAlert[];
  /** Alerts after the history that are NOT the same problem: none should show history. */
  unrelated?: HistoryAlert[];
}

export interface RecurrenceCase {
  history: string;
  kind: 'later' | 'unrelated';
  alert: string;
  /** The card carried a "Seen before" block. */
  seenBefore: boolean;
  /** …and it quoted the first occurrence's fix. */
  quotesFix: boolean;
  /** After the merge: the card answered at once (instant recall) from the drafted entry. */
  instant?: boolean;
}

export interface RecurrenceReport {
  histories: number;
  later: number;
  unrelated: number;
  /** Later cards with a "Seen before" block quoting the first fix / later cards. */
  seenBeforeRate: number;
  /** Later cards answered by instant recall of the drafted entry after the merge / later cards. */
  instantRecallRate: number;
  /** Unrelated cards with a "Seen before" block / unrelated cards. */
  falseSeenBeforeRate: number;
  cases: RecurrenceCase[];
  /** Histories that could not be replayed, with the reason (never counted as a pass). */
  errors: Array<{ history: string; reason: string }>;
}

/** Parses and checks a fixture file's histories; throws naming the first problem. */
export function parseHistories(json: unknown, file = 'histories'): History[] {
  const list = Array.isArray(json) ? json : (json as { histories?: unknown })?.histories;
  if (!Array.isArray(list)) throw new Error(`${file}: expected a JSON array of histories (or {"histories": [...]})`);
  return list.map((h, i) => {
    const where = `${file}: history ${i + 1}`;
    if (typeof h !== 'object' || h === null) throw new Error(`${where}: not an object`);
    const o = h as Partial<History>;
    if (typeof o.id !== 'string' || o.id === '') throw new Error(`${where}: "id" must be a non-empty string`);
    const alertOk = (a: unknown): a is HistoryAlert =>
      typeof a === 'object' &&
      a !== null &&
      typeof (a as HistoryAlert).labels?.['alertname'] === 'string' &&
      !Number.isNaN(Date.parse((a as HistoryAlert).startsAt));
    if (!alertOk(o.first)) throw new Error(`${where} (${o.id}): "first" needs labels.alertname and a startsAt time`);
    if (!o.fix || typeof o.fix.text !== 'string' || o.fix.text.trim() === '' || typeof o.fix.by !== 'string')
      throw new Error(`${where} (${o.id}): "fix" needs "by" and a non-empty "text"`);
    if (!Array.isArray(o.later) || !o.later.every(alertOk))
      throw new Error(`${where} (${o.id}): "later" must be a list of alerts with labels.alertname and startsAt`);
    if (o.unrelated !== undefined && (!Array.isArray(o.unrelated) || !o.unrelated.every(alertOk)))
      throw new Error(`${where} (${o.id}): "unrelated" must be a list of alerts with labels.alertname and startsAt`);
    return { about: '', ...o } as History;
  });
}

function incidentOf(a: HistoryAlert, status: 'firing' | 'resolved' = 'firing'): Incident {
  const endsAt = status === 'resolved' ? new Date(Date.parse(a.startsAt) + (a.minutes ?? 0) * 60_000).toISOString() : '0001-01-01T00:00:00Z';
  const batch = parseAlertmanagerPayload({
    version: '4',
    status,
    receiver: 'reprise',
    groupKey: `{}:{alertname="${a.labels['alertname']}"}`,
    alerts: [{ status, labels: a.labels, annotations: a.annotations ?? {}, startsAt: a.startsAt, endsAt }],
  });
  const i = batch.incidents[0];
  if (!i) throw new Error(`alert ${a.labels['alertname']} produced no incident`);
  return i;
}

/** A surface that shows nothing: it takes what the outbox sends, so the loop runs as it does in `serve`. */
function quietSurface(): ChatTransport {
  let n = 0;
  return {
    name: 'eval',
    inlineDetail: true,
    start: async () => undefined,
    post: async (to) => ({ transport: 'eval', channel: to.channel, id: `m${++n}` }),
    reply: async (root) => ({ transport: 'eval', channel: root.channel, id: `m${++n}`, thread: root.id }),
    update: async () => undefined,
    ephemeral: async () => undefined,
    close: async () => undefined,
  };
}

const describeAlert = (a: HistoryAlert): string =>
  `${a.labels['alertname']}{${Object.entries(a.labels)
    .filter(([k]) => k !== 'alertname' && k !== 'severity')
    .map(([k, v]) => `${k}=${v}`)
    .join(',')}}`;

/** A replay of one history: the first occurrence and its fix, then each later or unrelated alert, on `catalog`. */
async function replay(h: History, catalog: () => CatalogSnapshot, recall: RecallOptions): Promise<{ cards: CardView[]; fixEntry: Entry }> {
  const posts: CardView[] = [];
  const ledger = await Ledger.open(createStore('memory://', ''), {
    onAppend: (events: readonly LedgerEvent[]) => {
      for (const e of events) if (e.type === 'outbox' && e.op === 'post' && e.view?.kind === 'card') posts.push(e.view as CardView);
    },
  });
  const clock = new ManualClock(new Date(Date.parse(h.first.startsAt) + 60_000).toISOString());
  const surface = quietSurface();
  const { bot, outbox } = buildLoop({
    ledger,
    catalog,
    clock,
    logger: silentLogger,
    recall,
    routing: new Routing({ transports: [{ name: 'eval', defaultChannel: '#eval', param: 'channel' }], rules: [], mentions: [] }),
    transports: new Map([['eval', surface]]),
    fixes: { ask: false, maxBytes: 8 * 1024, perThread: 5 },
  });
  const settle = async (): Promise<void> => {
    await bot.idle();
    await outbox.idle();
  };
  const at = (iso: string): void => clock.set(new Date(Math.max(clock.now().getTime(), Date.parse(iso) + 60_000)));
  try {
    const first = incidentOf(h.first);
    at(h.first.startsAt);
    await bot.handle(incidentIntents([first]));
    await settle();
    const root: MessageRef | undefined = ledger.read.newestThread(first.triggerKey)?.roots['eval']
      ? { transport: 'eval', ...ledger.read.newestThread(first.triggerKey)!.roots['eval']! }
      : undefined;
    if (h.first.minutes !== undefined) {
      at(new Date(Date.parse(h.first.startsAt) + h.first.minutes * 60_000).toISOString());
      await bot.handle(incidentIntents([incidentOf(h.first, 'resolved')]));
    }
    const actor = { id: h.fix.by, name: h.fix.by, via: 'eval' };
    await bot.handle({ type: 'fixed', eventId: `fix-${h.id}`, actor, text: h.fix.text, target: root ? { message: root } : { triggerKey: first.triggerKey } });
    await settle();
    const material = {
      user: `eval:${h.fix.by}`,
      name: h.fix.by,
      via: 'eval',
      text: h.fix.text,
      at: clock.now().toISOString(),
      alert: openAlert(first),
      triedAndFailed: [],
    };
    const draft = renderFixEntry(material, dupFingerprint(first), first.triggerKey);
    const parsed = parseEntry(draft.path, draft.content);
    if (!parsed.entry) throw new Error(`the curator's draft did not parse: ${parsed.problems.map((p) => p.message).join('; ')}`);
    const cards: CardView[] = [];
    for (const a of [...h.later, ...(h.unrelated ?? [])]) {
      const before = posts.length;
      at(a.startsAt);
      const i = incidentOf(a);
      await bot.handle(incidentIntents([i]));
      await settle();
      const card = posts.slice(before).find((c) => c.triggerKey === i.triggerKey);
      if (!card) throw new Error(`no card was posted for ${describeAlert(a)}`);
      cards.push(card);
      if (a.minutes !== undefined) {
        at(new Date(Date.parse(a.startsAt) + a.minutes * 60_000).toISOString());
        await bot.handle(incidentIntents([incidentOf(a, 'resolved')]));
        await settle();
      }
    }
    return { cards, fixEntry: parsed.entry };
  } finally {
    await outbox.stop();
    await ledger.close();
  }
}

/** Words of the fix a "Seen before" line must quote (its start, as the card shows it). */
const quoted = (fix: string): string => fix.replace(/\s+/g, ' ').trim().slice(0, 40);

/**
 * Runs every history twice: against `entries` as they are (the memory before the merge: "seen
 * before" must carry the fix), and with the fix's drafted entry merged (instant recall).
 */
export async function runRecurrence(histories: readonly History[], entries: readonly Entry[], recall: RecallOptions): Promise<RecurrenceReport> {
  const snapshot = (list: readonly Entry[]): CatalogSnapshot => buildCatalogSnapshot(list, new PostingsIndex(list));
  const before = snapshot(entries);
  const cases: RecurrenceCase[] = [];
  const errors: RecurrenceReport['errors'] = [];
  for (const h of histories) {
    try {
      const { cards, fixEntry } = await replay(h, () => before, recall);
      const merged = snapshot([...entries.filter((e) => e.id !== fixEntry.id), fixEntry]);
      const after = await replay(h, () => merged, recall);
      const alerts = [...h.later.map((a) => ['later', a] as const), ...(h.unrelated ?? []).map((a) => ['unrelated', a] as const)];
      alerts.forEach(([kind, a], n) => {
        const card = cards[n]!;
        const lines = card.seenBefore?.lines ?? [];
        const c: RecurrenceCase = {
          history: h.id,
          kind,
          alert: describeAlert(a),
          seenBefore: lines.length > 0,
          quotesFix: lines.some((l) => richText(asRichText(l)).includes(quoted(h.fix.text))),
        };
        if (kind === 'later') c.instant = after.cards[n]?.headline.answer === 'instant' && after.cards[n]?.headline.entry === fixEntry.id;
        cases.push(c);
      });
    } catch (err) {
      errors.push({ history: h.id, reason: err instanceof Error ? err.message : String(err) });
    }
  }
  const later = cases.filter((c) => c.kind === 'later');
  const unrelated = cases.filter((c) => c.kind === 'unrelated');
  const rate = (n: number, d: number): number => (d === 0 ? 0 : n / d);
  return {
    histories: histories.length,
    later: later.length,
    unrelated: unrelated.length,
    seenBeforeRate: rate(later.filter((c) => c.seenBefore && c.quotesFix).length, later.length),
    instantRecallRate: rate(later.filter((c) => c.instant).length, later.length),
    falseSeenBeforeRate: rate(unrelated.filter((c) => c.seenBefore).length, unrelated.length),
    cases,
    errors,
  };
}

/** The report as a person reads it. */
export function recurrenceText(r: RecurrenceReport): string {
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
  const out = [
    `recurrence: ${r.histories} histories, ${r.later} later occurrences, ${r.unrelated} unrelated alerts`,
    `  seen before shows the first fix:        ${pct(r.seenBeforeRate)} of later cards`,
    `  instant recall after the merge:         ${pct(r.instantRecallRate)} of later cards`,
    `  false "seen before" on unrelated alerts: ${pct(r.falseSeenBeforeRate)}`,
  ];
  const misses = r.cases.filter((c) => (c.kind === 'later' ? !(c.seenBefore && c.quotesFix) || !c.instant : c.seenBefore));
  if (misses.length > 0) {
    out.push('', 'misses:');
    for (const c of misses)
      out.push(
        `  ${c.history} · ${c.kind} ${c.alert}: ${c.kind === 'unrelated' ? 'showed history' : [!(c.seenBefore && c.quotesFix) ? 'no seen-before fix' : '', !c.instant ? 'no instant recall after merge' : ''].filter(Boolean).join(', ')}`,
      );
  }
  for (const e of r.errors) out.push(`  could not replay ${e.history}: ${e.reason}`);
  return `${out.join('\n')}\n`;
}

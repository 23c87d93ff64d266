/**
 * From what recall decided to what the thread shows (SPEC §9 anatomy), as structure: the
 * card (thread root, edited in place as the incident's state changes) and the detail (the full
 * analysis in the thread). Every string is raw text; renderers escape it per surface.
 */
import type { Verdict } from '../ledger-events.js';
import type { RecalledAnswer, RecallResult } from '../recall/recall.js';
import { describe } from '../recall/structural.js';
import type { Entry, Incident } from '../types.js';
import { markdownParagraphs, type CardView, type DetailSection, type DetailView, type LinkView, type StepView } from './thread-view.js';

/** Recurrence facts for the trigger, read from the ledger before this firing was recorded. */
export interface RecurrenceFacts {
  /** Opens seen before this one. */
  previousCount: number;
  lastSeen?: string;
  previousEntry?: string;
}

export interface ThreadInput {
  incident: Incident;
  recall: RecallResult;
  recurrence: RecurrenceFacts;
  now: Date;
  /** The open's id: the card's controls carry it back. */
  controlsId: string;
  /** Surface ids to ping (critical firings only; the caller decides). */
  mentions?: string[];
  /** Why the loop did not investigate (no model yet, or a budget). */
  fallThroughNote?: string;
  /** Web link of an entry (e.g. into the catalog repository), when one is configured. */
  linkFor?: (entryId: string) => string | undefined;
}

/** Most steps of a runbook shown in the thread. */
const MAX_STEPS = 4;
const SECTION_LIMIT = 600;

function excerpt(text: string | undefined, limit = SECTION_LIMIT): string {
  if (!text) return '';
  const t = text.replace(/\r/g, '').trim();
  return t.length > limit ? `${t.slice(0, limit).trimEnd()}…` : t;
}

/**
 * The first steps of a runbook's diagnosis, each with the command that follows it: a
 * continuation line that is one code span (`kubectl …`), or a fenced block.
 */
export function runbookSteps(entry: Entry, max = MAX_STEPS): StepView[] {
  const body = entry.sections['diagnosis'] ?? entry.sections['investigate'] ?? entry.sections['mitigation'] ?? '';
  const steps: Array<{ lines: string[]; code?: string }> = [];
  let fence: string[] | undefined;
  for (const raw of body.replace(/\r/g, '').split('\n')) {
    const line = raw.trim();
    if (fence) {
      if (line.startsWith('```')) {
        const last = steps[steps.length - 1];
        if (last && last.code === undefined) last.code = fence.join('\n');
        fence = undefined;
      } else fence.push(raw.replace(/^ {0,4}/, ''));
      continue;
    }
    if (line.startsWith('```')) {
      fence = [];
      continue;
    }
    const bullet = /^([-*]|\d{1,3}[.)])\s+(.*)$/.exec(line);
    if (bullet) {
      if (steps.length >= max) break;
      steps.push({ lines: [bullet[2] ?? ''] });
      continue;
    }
    const last = steps[steps.length - 1];
    if (!last || line === '') continue;
    // A continuation that is a single code span is the step's command.
    if (last.code === undefined && line.startsWith('`') && line.endsWith('`') && line.indexOf('`', 1) === line.length - 1 && line.length > 2) {
      last.code = line.slice(1, -1);
    } else last.lines.push(line);
  }
  return steps.map((s) => {
    const text = markdownParagraphs(s.lines.join(' '))[0] ?? [];
    const short = text.length > 0 ? text : [''];
    return s.code === undefined ? { text: short } : { text: short, code: s.code.length > 500 ? `${s.code.slice(0, 500)}…` : s.code };
  });
}

function trackLine(a: Pick<RecalledAnswer, 'kind' | 'track'>): string {
  const t = a.track;
  if (a.kind === 'runbook') return `👍 ${t.up} 👎 ${t.down}`;
  const concluded = t.resolved + (t.failed ?? 0);
  const inFlight = t.inFlight ? ` (${t.inFlight} in progress)` : '';
  return `resolved ${t.resolved} of ${concluded} concluded recalls${inFlight} · 👍 ${t.up} 👎 ${t.down}`;
}

/**
 * The card's feedback line once someone voted: the trigger's live 👍/👎 and, when an entry
 * answered, its track record as the outcome gate now sees it (a vote moves it at once).
 */
export function feedbackLine(votes: { up: number; down: number }, entry?: Pick<RecalledAnswer, 'kind' | 'track'>): string {
  const here = `votes on this alert: 👍 ${votes.up} 👎 ${votes.down}`;
  if (!entry) return here;
  return `${here} · entry track record: ${trackLine(entry)}`;
}

/** "12 min ago", "5 h ago", "2 d ago". */
export function ago(fromIso: string, now: Date): string {
  const ms = now.getTime() - Date.parse(fromIso);
  if (!Number.isFinite(ms) || ms < 0) return 'just now';
  const min = Math.round(ms / 60_000);
  if (min < 60) return `${min} min ago`;
  const h = Math.round(min / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.round(h / 24)} d ago`;
}

function where(i: Incident): string {
  return i.workload ? describe(i.workload) : (i.labels['instance'] ?? i.source);
}

/** Source, runbook, dashboards and a pre-filled Alertmanager silence: only http(s) links. */
export function alertLinks(i: Incident): LinkView[] {
  const links: LinkView[] = [];
  const add = (label: string, url: string | undefined): void => {
    const u = url?.trim();
    if (u && /^https?:\/\/[^\s]+$/i.test(u) && u.length <= 2000 && !links.some((l) => l.url === u)) links.push({ label, url: u });
  };
  add('source', i.generatorUrl);
  add('runbook', i.runbookUrl);
  for (const key of ['dashboard', 'dashboard_url', 'grafana_url', 'dashboardUrl']) add('dashboard', i.annotations[key]);
  if (i.alertmanagerUrl) {
    const matchers = Object.entries(i.labels)
      .filter(([k]) => ['alertname', 'namespace', 'pod', 'service', 'job', 'cluster', 'instance'].includes(k))
      .map(([k, v]) => `${k}="${v.replace(/["\\]/g, '\\$&')}"`);
    const base = i.alertmanagerUrl.replace(/\/+$/, '');
    add('silence', `${base}/#/silences/new?filter=${encodeURIComponent(`{${matchers.join(',')}}`)}`);
  }
  return links;
}

function instantSection(a: RecalledAnswer, link: (id: string) => string | undefined): DetailSection {
  const e = a.entry;
  const section: DetailSection = { kind: 'instant', title: e.title, entry: e.id, track: trackLine(a) };
  const url = link(e.id);
  if (url) section.entryUrl = url;
  const cause = excerpt(e.sections['cause']);
  const resolution = excerpt(e.sections['resolution']);
  const tried = excerpt(e.sections['tried and failed'], 400);
  if (cause) section.cause = markdownParagraphs(cause);
  if (resolution) section.resolution = markdownParagraphs(resolution);
  if (tried) section.triedBefore = markdownParagraphs(tried);
  return section;
}

function runbookSection(a: RecalledAnswer, link: (id: string) => string | undefined): DetailSection {
  const section: DetailSection = {
    kind: 'runbook',
    title: a.entry.title,
    entry: a.entry.id,
    confidence: a.confidence,
    steps: runbookSteps(a.entry),
    track: trackLine(a),
  };
  const url = link(a.entry.id);
  if (url) section.entryUrl = url;
  return section;
}

/** The card: what on-call sees in the channel. */
export function buildCard(input: ThreadInput): CardView {
  const { incident: i, recall: r } = input;
  const lead = r.instant ?? r.runbook;
  const verdict: Verdict = r.instant ? 'action_suggested' : 'inconclusive';
  return {
    kind: 'card',
    state: 'firing',
    alertname: i.alertname,
    where: where(i),
    severity: i.severity,
    verdict,
    headline: lead
      ? { answer: r.instant ? 'instant' : 'runbook', entry: lead.entry.id, title: lead.entry.title, confidence: lead.confidence }
      : { answer: 'none' },
    links: alertLinks(i),
    triggerKey: i.triggerKey,
    controlsId: input.controlsId,
    controls: true,
    mentions: input.mentions ?? [],
  };
}

/** The detail: the full analysis, in the thread. */
export function buildDetail(input: ThreadInput): DetailView {
  const { incident: i, recall: r, recurrence: rec, now } = input;
  const link = input.linkFor ?? (() => undefined);
  const sections: DetailSection[] = [];
  let confidence: string | undefined;
  if (r.instant) {
    const a = r.instant;
    const factor = a.track.withheld ? 'no track record yet' : `track record ${a.track.factor.toFixed(2)}`;
    confidence = `recalled at ${a.confidence.toFixed(2)} (${a.tier} match × ${factor}${a.confirmCapped ? '; capped at 0.70: no live-state check ran' : ''})`;
    sections.push(instantSection(a, link));
  } else {
    sections.push({
      kind: 'fall_through',
      note: input.fallThroughNote ?? 'an investigation is needed; no model is configured, so these are recurrence facts and the closest catalog entries only',
    });
    for (const s of r.trace) if (s.gate === 'outcome' && !s.passed && s.entry) sections.push({ kind: 'refused', entry: s.entry, reason: s.reason });
  }
  if (r.runbook) sections.push(runbookSection(r.runbook, link));
  if (r.nearMiss) sections.push({ kind: 'near_miss', entry: r.nearMiss.entry, gate: r.nearMiss.gate, reason: r.nearMiss.reason });
  if (!r.instant && !r.runbook && r.ranked.length > 0) sections.push({ kind: 'closest', entries: r.ranked.slice(0, 3) });
  const facts: Array<[string, string]> = [['alert', i.alertname]];
  // What the alert's author wrote about it (data: every surface shows it as literal text).
  const said = (i.annotations['summary'] ?? i.annotations['description'] ?? '').trim();
  if (said !== '') facts.push(['summary', said.length > 500 ? `${said.slice(0, 499)}…` : said]);
  if (i.workload) facts.push(['resource', describe(i.workload)]);
  facts.push(['started', i.startsAt]);
  if (rec.previousCount > 0) {
    let f = `#${rec.previousCount + 1}`;
    if (rec.lastSeen) f += ` · last ${ago(rec.lastSeen, now)}`;
    if (rec.previousEntry) f += ` · previous: ${rec.previousEntry}`;
    facts.push(['recurrence', f]);
  } else facts.push(['recurrence', 'first time seen']);
  const labels = Object.entries(i.labels)
    .filter(([k]) => k !== 'alertname')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, 30);
  const detail: DetailView = { kind: 'detail', sections, facts, labels, triggerKey: i.triggerKey };
  if (confidence) detail.confidence = confidence;
  return detail;
}

/** Both halves of a new thread. */
export function buildThread(input: ThreadInput): { card: CardView; detail: DetailView } {
  return { card: buildCard(input), detail: buildDetail(input) };
}

/** "resolved after N min", from the alert's own start to its end when it sent them. */
export function resolvedNote(startedAt: string, endedAt: string): string {
  const ms = Date.parse(endedAt) - Date.parse(startedAt);
  const min = Number.isFinite(ms) ? Math.max(0, Math.round(ms / 60_000)) : 0;
  return `resolved after ${min} min`;
}

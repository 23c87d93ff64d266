/**
 * From what recall decided to what the thread shows (SPEC §9 anatomy), as structure: the
 * card (thread root, edited in place as the incident's state changes) and the detail (the full
 * analysis in the thread). Every string is raw text; renderers escape it per surface.
 */
import { checkLinks, linkCandidates } from '../alert-links.js';
import type { Verdict } from '../verdict.js';
import type { RecalledAnswer, RecallResult } from '../recall/recall.js';
import { describe } from '../recall/structural.js';
import type { Entry, Incident } from '../types.js';
import { entrySection } from './entry-text.js';
import { markdownParagraphs, type AlertSaid, type CardView, type DetailSection, type DetailView, type LinkView, type StepView } from './thread-view.js';

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

/** "12 min ago", "1 h 33 min ago" (under 6 h the minutes count: rounded, 1 h 33 would say 2 h), "5 h ago", "2 d ago". */
export function ago(fromIso: string, now: Date): string {
  const ms = now.getTime() - Date.parse(fromIso);
  if (!Number.isFinite(ms) || ms < 0) return 'just now';
  const min = Math.round(ms / 60_000);
  if (min < 60) return `${min} min ago`;
  if (min < 6 * 60) return min % 60 === 0 ? `${min / 60} h ago` : `${Math.floor(min / 60)} h ${min % 60} min ago`;
  const h = Math.round(min / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.round(h / 24)} d ago`;
}

function where(i: Incident): string {
  if (i.workload) return describe(i.workload);
  // A Grafana rule is what its alert is about: two rules sharing `DatasourceNoData` must read apart.
  const rule = i.labels['rulename'];
  if (rule) return i.labels['grafana_folder'] ? `${i.labels['grafana_folder']}/${rule}` : rule;
  return i.labels['instance'] ?? i.source;
}

/**
 * Source, runbook, dashboards, panel, silence, image: the links checked when the alert arrived
 * (core/alert-links.ts), or — for an incident built before links were kept — checked now.
 */
export function alertLinks(i: Incident): LinkView[] {
  return (i.links ?? checkLinks(linkCandidates(i)).links).map((l) => ({ label: l.label, url: l.url }));
}

/** Bounds of what the alert says, on the card (the thread keeps a longer description). */
const SAID = { summary: 300, description: 600, descriptionLines: 8, value: 300, thread: 2000 } as const;

function oneLine(text: string, limit: number): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > limit ? `${t.slice(0, limit - 1).trimEnd()}…` : t;
}

/** At most `limit` characters and `lines` lines, cut with "…". */
function bounded(text: string, limit: number, lines: number): string {
  const rows = text.replace(/\r/g, '').trim().split('\n');
  let t = rows.slice(0, lines).join('\n');
  const cut = rows.length > lines || t.length > limit;
  if (t.length > limit) t = t.slice(0, limit - 1);
  return cut ? `${t.trimEnd()}…` : t;
}

/** The alert's summary and description (whichever it has; the name alone is no summary), and its value. */
function alertText(i: Incident): { summary?: string; description?: string } {
  const summary = i.title.trim() !== '' && i.title.trim() !== i.alertname ? i.title.trim() : undefined;
  const message = i.message.trim();
  const description = message !== '' && message !== summary && message !== i.alertname ? message : undefined;
  return { ...(summary ? { summary } : {}), ...(description ? { description } : {}) };
}

/** What the alert says, bounded for the card; undefined when it says nothing beyond its name. */
export function alertSaid(i: Incident): AlertSaid | undefined {
  const { summary, description } = alertText(i);
  const said: AlertSaid = {};
  if (summary) said.summary = oneLine(summary, SAID.summary);
  if (description) said.description = bounded(description, SAID.description, SAID.descriptionLines);
  if (i.value?.trim()) said.value = oneLine(i.value, SAID.value);
  return Object.keys(said).length > 0 ? said : undefined;
}

function instantSection(a: RecalledAnswer, link: (id: string) => string | undefined): DetailSection {
  const e = a.entry;
  const section: DetailSection = { kind: 'instant', title: e.title, entry: e.id, track: trackLine(a) };
  const url = link(e.id);
  if (url) section.entryUrl = url;
  // Each section as its rich text, parsed from the entry's markdown (never its escaped source); a
  // section that only says nothing was recorded is left out.
  const cause = entrySection(excerpt(e.sections['cause']));
  // An entry that has been fixed more than one way shows its ranked list (most reliable first) as what to do.
  const resolution = entrySection(excerpt(e.sections['what has fixed it'])) ?? entrySection(excerpt(e.sections['resolution']));
  const tried = entrySection(excerpt(e.sections['tried and failed'], 400));
  if (cause) section.cause = cause;
  if (resolution) section.resolution = resolution;
  if (tried) section.triedBefore = tried;
  return section;
}

/**
 * A runbook answered as one of N related runbooks (issue 33): the title says so, and the
 * detail names the others, so on-call knows to check which one the alert is.
 */
export function relatedNote(a: Pick<RecalledAnswer, 'related'>, withIds: boolean): string {
  const others = a.related ?? [];
  if (others.length === 0) return '';
  return ` (one of ${others.length + 1} related runbooks${withIds ? `; also ${others.map((e) => e.id).join(', ')}` : ''})`;
}

function runbookSection(a: RecalledAnswer, link: (id: string) => string | undefined): DetailSection {
  const section: DetailSection = {
    kind: 'runbook',
    title: `${a.entry.title}${relatedNote(a, true)}`,
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
  const said = alertSaid(i);
  return {
    kind: 'card',
    state: 'firing',
    alertname: i.alertname,
    where: where(i),
    severity: i.severity,
    ...(said ? { said } : {}),
    verdict,
    headline: lead
      ? {
          answer: r.instant ? 'instant' : 'runbook',
          entry: lead.entry.id,
          title: `${lead.entry.title}${relatedNote(lead, false)}`,
          confidence: lead.confidence,
        }
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
  // What the alert's author wrote is on the card; a description the card had to cut is here whole
  // (bounded). Data: every surface shows it as literal text.
  const { description } = alertText(i);
  if (description && bounded(description, SAID.description, SAID.descriptionLines) !== description.replace(/\r/g, '').trim())
    facts.push(['description', bounded(description, SAID.thread, 40)]);
  if (i.workload) facts.push(['resource', describe(i.workload)]);
  // When it fired, as people read times here (`2026-11-29 03:00 UTC`), not an ISO stamp.
  const started = Date.parse(i.startsAt);
  facts.push(['started', Number.isFinite(started) ? `${new Date(started).toISOString().slice(0, 16).replace('T', ' ')} UTC` : i.startsAt]);
  if (rec.previousCount > 0) {
    let f = `#${rec.previousCount + 1}`;
    if (rec.lastSeen) f += ` · last ${ago(rec.lastSeen, now)}`;
    if (rec.previousEntry) f += ` · previous: ${rec.previousEntry}`;
    facts.push(['recurrence', f]);
  } else facts.push(['recurrence', 'first time seen']);
  // A link the alert carried but the card does not show is said, never dropped in silence.
  if (i.refusedLinks && i.refusedLinks.length > 0)
    facts.push([
      'links not shown',
      i.refusedLinks
        .slice(0, 6)
        .map((l) => `${l.field.slice(0, 60)}: ${l.reason}`)
        .join('; '),
    ]);
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

/**
 * The memory view's pages (docs/memory-view.md), rendered from figures (ui-data.ts) into
 * escaped HTML (ui-html.ts). Figures a browser test compares carry `data-figure="<name>"`
 * holding the plain number; entry rows `data-entry`, incident rows `data-open`, the gate trace
 * `data-gate-trace`.
 * Over 450 lines on purpose: one short template function per page of the memory view, side by
 * side so their markup and figures stay alike; split it by page when one grows past a screen.
 */
import type { DeepReadonly, Thread, ViewCuration, ViewIncident } from '../../core/ledger/ledger-reader.js';
import type { OpenTrace } from '../../core/ledger-events.js';
import type { Entry } from '../../core/types.js';
import { personFromKey, personKey, personLabel, type PeopleNames } from '../../core/people.js';
import { legend, stackedBars, type Series } from './ui-charts.js';
import {
  CLASSES,
  FLAG_LABEL,
  FLAGS,
  PAGE_SIZE,
  PERIODS,
  type Flag,
  type Gaps,
  type IncidentQuery,
  type KnowledgeQuery,
  type KnowledgeRow,
  type Overview,
  type Period,
} from './ui-data.js';
import { duration, fmt, h, href, outsideLink, when, type Html } from './ui-html.js';

export const UI_BASE = '/ui';
/**
 * Where the sign-in form posts: outside `/ui`, so that no route under `/ui` takes anything but
 * GET and HEAD. It only sets the session cookie (an HMAC of the token, never the token).
 */
export const UI_SIGN_IN = '/auth/ui';

const NAV: Array<[string, string]> = [
  ['', 'Overview'],
  ['/knowledge', 'Knowledge'],
  ['/incidents', 'Incidents'],
  ['/gaps', 'Gaps'],
];

export const CLASS_LABEL: Record<string, string> = {
  instant: '⚡ instant recall',
  runbook: '📚 runbook',
  investigation: '🔎 investigation',
  degraded: 'degraded',
  silenced: '🔕 silenced',
};

/** What a KB pull request is for, by the curation item that filed it (its subject) — in words a lead reads. */
export const PR_KIND: Record<string, string> = {
  finding: 'finding',
  note: 'note',
  fix: 'fix',
  postmortem: 'postmortem',
};

/** A KB PR's kind label: its subject (`fix`), and how it was filed when not as a PR of its own (a comment, an edit of an entry, added to an open PR). */
export function prKind(subject: string | undefined, decision: string | undefined): string {
  const kind = subject === undefined ? (decision === undefined ? 'KB' : (DECISION_KIND[decision] ?? 'KB')) : (PR_KIND[subject] ?? subject);
  if (decision === 'pr_comment' || decision === 'duplicate_pr') return `${kind} · comment`;
  if (decision === 'amend_pr') return `${kind} · edits an entry`;
  if (decision === 'pr_update') return `${kind} · added to an open PR`;
  return kind;
}

/** The subject a filed decision implies, when the subject is not known (a thread's own curation). */
const DECISION_KIND: Record<string, string> = { novel: 'finding', concept_pr: 'note', fix_pr: 'fix', postmortem_pr: 'postmortem', amend_pr: 'fix' };

const ANSWER_SERIES: Series[] = [
  { cls: 'k-instant', label: CLASS_LABEL['instant']! },
  { cls: 'k-runbook', label: CLASS_LABEL['runbook']! },
  { cls: 'k-investigation', label: CLASS_LABEL['investigation']! },
  { cls: 'k-degraded', label: CLASS_LABEL['degraded']! },
  { cls: 'k-silenced', label: CLASS_LABEL['silenced']! },
];

/**
 * An entry's markdown as a lead reads it: without the word joiners the neutraliser puts in so a
 * forge links and mentions nothing (`https:\u2060//`, `@\u2060bob`). In a `<pre>` of escaped text
 * nothing is linked or mentioned anyway; left in, each would show as a visible `\u{2060}`.
 */
function readableSource(markdown: string): string {
  return markdown.replace(/\u2060/g, '');
}

/** The page around a body: nav, the stylesheet, no script. */
export function layout(title: string, current: string, body: Html, who?: string): string {
  const nav = NAV.map(([path, label]) => h`<a href="${UI_BASE + path}"${current === path ? h` aria-current="page"` : ''}>${label}</a>`);
  return `<!doctype html>${
    h`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer"><title>${title} · Reprise memory</title><link rel="stylesheet" href="${UI_BASE}/static/ui.css"></head>
<body><header class="top"><span class="brand">Reprise memory</span><nav>${nav}</nav>${who ? h`<span class="who">signed in as ${who}</span>` : ''}</header>
<main>${body}</main></body></html>`.value
  }`;
}

function figure(name: string, value: number | undefined, shown?: string): Html {
  return h`<span data-figure="${name}">${value === undefined ? '' : String(value)}</span>${shown !== undefined ? h` <span class="muted">${shown}</span>` : ''}`;
}

/** A figure card: the `data-figure` element holds the plain number (empty when there is none); a friendlier form may follow. */
/**
 * A figure card. With `display` (a share as `40 %`) the reader sees only that; the plain number
 * is the `value` of the `<data>` element carrying `data-figure` — never both side by side (`0.4 40 %`).
 */
function card(label: Html | string, name: string, value: number | undefined, display?: string): Html {
  if (value !== undefined && display !== undefined)
    return h`<div class="card"><div class="label">${label}</div><div class="value"><data data-figure="${name}" value="${String(value)}">${display}</data></div></div>`;
  return h`<div class="card"><div class="label">${label}</div><div class="value"><span data-figure="${name}">${value === undefined ? '' : String(value)}</span>${
    value === undefined ? '—' : ''
  }</div></div>`;
}

/**
 * A duration card: a person reads `3 h 20 min`; the seconds are the `value` of the `<data>`
 * element that carries `data-figure` (its text is the words), so nothing shows `12000 s`.
 */
function durationCard(label: string, name: string, seconds: number | undefined): Html {
  return h`<div class="card"><div class="label">${label}</div><div class="value"><data data-figure="${name}" value="${seconds === undefined ? '' : String(seconds)}">${duration(seconds)}</data></div></div>`;
}

function pct(n: number | undefined): string {
  return n === undefined ? '—' : `${Math.round(n * 100)} %`;
}

// ── overview ──

export function overviewPage(o: Overview, entriesTotal: number, who?: string): string {
  const periods = PERIODS.map(
    (p: Period, n) => h`${n > 0 ? ' · ' : ''}${p === o.days ? h`<strong>${p} days</strong>` : h`<a href="${href(UI_BASE, { days: p })}">${p} days</a>`}`,
  );
  const chart = stackedBars({
    title: `Answers by kind per day, ${o.from} to ${o.to}`,
    columns: o.perDay.map((d) => d.day),
    series: ANSWER_SERIES,
    values: o.perDay.map((d) => [d.instant, d.runbook, d.investigation, d.degraded, d.silenced]),
  });
  const rows = [...o.perDay].reverse().filter((d) => d.instant + d.runbook + d.investigation + d.degraded + d.silenced > 0);
  const body = h`<h1>Is the memory working?</h1>
<p class="muted">Period: ${periods} — ${o.from} to ${o.to} (UTC days)</p>
<div class="cards">
${card(CLASS_LABEL['instant']!, 'answers-instant', o.totals.instant)}
${card(CLASS_LABEL['runbook']!, 'answers-runbook', o.totals.runbook)}
${card(CLASS_LABEL['investigation']!, 'answers-investigation', o.totals.investigation)}
${card(CLASS_LABEL['degraded']!, 'answers-degraded', o.totals.degraded)}
${card(CLASS_LABEL['silenced']!, 'answers-silenced', o.totals.silenced)}
${card('catalog entries', 'entries-total', entriesTotal)}
</div>
<h2>Answers by kind</h2>
${legend(ANSWER_SERIES)}
${chart}
<div class="scroll"><table>
<thead><tr><th>day</th>${ANSWER_SERIES.map((s) => h`<th class="num">${s.label}</th>`)}</tr></thead>
<tbody>${rows.map(
    (d) =>
      h`<tr data-day="${d.day}"><td>${d.day}</td><td class="num">${d.instant}</td><td class="num">${d.runbook}</td><td class="num">${d.investigation}</td><td class="num">${d.degraded}</td><td class="num">${d.silenced}</td></tr>`,
  )}${rows.length === 0 ? h`<tr><td colspan="6" class="muted">nothing answered in this period</td></tr>` : ''}</tbody>
<tfoot><tr><th>total</th><td class="num">${o.totals.instant}</td><td class="num">${o.totals.runbook}</td><td class="num">${o.totals.investigation}</td><td class="num">${o.totals.degraded}</td><td class="num">${o.totals.silenced}</td></tr></tfoot>
</table></div>
<h2>Model spend</h2>
<div class="cards">
${card('model calls', 'model-calls', o.modelCalls)}
${card('tokens spent', 'tokens-spent', o.tokensSpent)}
${card('tokens avoided (estimate)', 'tokens-avoided', o.tokensAvoided)}
${card('investigations', 'investigations', o.investigations)}
</div>
<p class="note">Tokens avoided = instant recalls that needed no model (${figure('recalls-no-model', o.instantNoModel)}: opens recorded as recalls, not the ones a model verified later) × the mean tokens of an investigation in this period — fresh investigations that called the model, rounded (${
    o.meanInvestigationTokens === undefined
      ? 'no investigation in the period to estimate from, so 0'
      : h`${figure('mean-investigation-tokens', o.meanInvestigationTokens)} tokens`
  }). Spent counts every model call recorded: investigations, a model's recall checks, thread questions.</p>
<h2>Time to acknowledge and to resolve</h2>
<div class="cards">
${card('acknowledged threads', 'acks', o.acks)}
${durationCard('ack median', 'ack-median-s', o.ackMedianS)}
${durationCard('ack p90', 'ack-p90-s', o.ackP90S)}
${card('resolved', 'resolves', o.resolves)}
${durationCard('resolve median', 'resolve-median-s', o.resolveMedianS)}
${durationCard('resolve p90', 'resolve-p90-s', o.resolveP90S)}
</div>
<p class="note">From the alert's start (its <code>startsAt</code>, else when the bot opened it) to a thread's first ack (👀, the On it button, <code>ack</code>, PagerDuty), and to the resolve that closed the episode. Median and p90 by nearest rank over a sample of up to 500 a day, counted on the day of the ack or the resolve.</p>
<h2>Recall precision</h2>
<div class="cards">
${card('precision (👍 share)', 'precision', o.precision === undefined ? undefined : Math.round(o.precision * 1000) / 1000, pct(o.precision))}
${card('👍 on recalls', 'votes-up', o.votesUp)}
${card('👎 on recalls', 'votes-down', o.votesDown)}
</div>
<p class="note">👍 / (👍 + 👎), live votes on the threads of instant recalls opened in the period.</p>`;
  return layout('Overview', '', body, who);
}

// ── knowledge ──

function flagChips(flags: readonly Flag[]): Html {
  return h`${flags.map((f) => h`<span class="flag ${f === 'below-floor' || f === 'contested' ? 'bad' : f === 'retired' ? '' : 'warn'}" data-flag="${f}">${FLAG_LABEL[f]}</span>`)}`;
}

const TREND: Record<string, string> = { rising: '↗ rising', falling: '↘ falling', steady: '→ steady', new: '· no history' };

function pager(base: string, query: Record<string, string | undefined>, page: number, total: number): Html {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  return h`<div class="pager">${page > 1 ? h`<a rel="prev" href="${href(base, { ...query, page: page - 1 })}">← previous</a>` : ''}<span class="muted">page ${page} of ${pages} · ${fmt(total)} rows</span>${
    page < pages ? h`<a rel="next" href="${href(base, { ...query, page: page + 1 })}">next →</a>` : ''
  }</div>`;
}

/** How the knowledge figures are computed: the same words as docs/memory-view.md, the same formulas as ledger-reads.ts trackRecord and ui-data.ts knowledgeRow. */
const TRACK_RECORD_NOTE = h`<p class="note">The outcome gate's track record. Successes S = resolved + 👍 and observations N = resolved + failed + 👍 + 👎′ for an entry that answers as an instant recall; S = 👍 and N = 👍 + 👎′ for a runbook (it claims no resolve). 👎′ is 👎 less one per two confirmations (independent re-investigations that reached the same finding); <em>failed</em> counts recalls not resolved within <code>ledger.resolve_window</code>, once the ledger has seen any resolve. <strong>Gate rate</strong> = (S + 1) / (N + 2): the outcome gate refuses the entry below <code>recall.outcome_floor</code>. <strong>Factor</strong> = (S + 1) / (N + 1): what recall multiplies confidence by (1 until anything graded it). <strong>Trend</strong>: (resolves + 👍) / (answers + 👍 + 👎) in the last 4 weeks against the 4 before, ±10 points.</p>
<p class="note">Flags: <em>decaying</em> — graded, factor below 1 and gate rate not below the floor, with a failure, a 👎′ or a falling trend; <em>below the floor</em> — gate rate below <code>recall.outcome_floor</code>, the outcome gate refuses it; <em>contested</em> — 👎 at least as many as 👍, and not all offset by confirmations; <em>stale</em> — neither its own date (<code>last_validated</code>, else <code>timestamp</code>) nor the day this bot first served it is within <code>recall.stale_after</code>; <em>never recalled</em> — no recall and no answer recorded; <em>retired</em> — its status says so.</p>`;

export function knowledgePage(
  rows: readonly KnowledgeRow[],
  total: number,
  entriesTotal: number,
  page: number,
  f: KnowledgeQuery,
  kinds: readonly string[],
  who?: string,
): string {
  const query = { flag: f.flag, q: f.q, kind: f.kind };
  const body = h`<h1>Which knowledge should we trust?</h1>
<p class="muted">${figure('entries-total', entriesTotal)} entries in the served catalog; ${figure('entries-shown', total)} match.</p>
<form class="filters" method="get" action="${UI_BASE}/knowledge">
<label>search <input type="search" name="q" value="${f.q ?? ''}" maxlength="200"></label>
<label>flag <select name="flag"><option value="">any</option>${FLAGS.map((x) => h`<option value="${x}"${f.flag === x ? h` selected` : ''}>${FLAG_LABEL[x]}</option>`)}</select></label>
<label>type <select name="kind"><option value="">any</option>${kinds.map((k) => h`<option value="${k}"${f.kind === k ? h` selected` : ''}>${k}</option>`)}</select></label>
<button type="submit">Filter</button></form>
<div class="scroll"><table>
<thead><tr><th>entry</th><th class="num">recalls</th><th class="num">resolved</th><th class="num">👍 up</th><th class="num">👎 down</th><th class="num">gate rate</th><th class="num">factor</th><th>trend</th><th class="hide-narrow">last recalled</th><th class="hide-narrow">last validated</th><th>flags</th></tr></thead>
<tbody>${rows.map(
    (r) => h`<tr data-entry="${r.id}"><td><a href="${UI_BASE}/knowledge/${encodeURIComponent(r.id)}">${r.id}</a><br><span class="muted">${r.title}</span></td>
<td class="num" data-figure="recalls">${r.recalls}</td><td class="num" data-figure="resolved">${r.resolved}</td><td class="num" data-figure="up">${r.up}</td><td class="num" data-figure="down">${r.down}</td>
<td class="num" data-figure="rate">${r.rate.toFixed(2)}</td><td class="num" data-figure="factor">${r.factor.toFixed(2)}</td><td>${TREND[r.trend]}</td><td class="hide-narrow">${when(r.lastRecalled)}</td><td class="hide-narrow">${r.lastValidated ?? '—'}</td><td>${flagChips(r.flags)}</td></tr>`,
  )}${rows.length === 0 ? h`<tr><td colspan="11" class="muted">no entry matches</td></tr>` : ''}</tbody></table></div>
${pager(`${UI_BASE}/knowledge`, query, page, total)}
${TRACK_RECORD_NOTE}`;
  return layout('Knowledge', '/knowledge', body, who);
}

function traceBlock(trace: DeepReadonly<OpenTrace> | undefined, answered?: string): Html {
  if (!trace) return h`<div class="trace" data-gate-trace="none"><p class="muted">no trace recorded (this open predates gate traces in the ledger)</p></div>`;
  const verdict = trace.answer === 'incident' ? '⚡ an instant recall fired' : whyWords(trace);
  return h`<div class="trace" data-gate-trace="${trace.stoppedBy ?? trace.answer}">
<p>${trace.model ? 'Gates before the model: ' : ''}<strong>${verdict}</strong>${trace.model ? ' · then a model decided the instant part (rerank, confirm, verify)' : ''}${answered ? h` · answered with <a href="${UI_BASE}/knowledge/${encodeURIComponent(answered)}">${answered}</a>` : ''}</p>
${
  trace.nearMiss
    ? h`<p>🔎 near miss: <a href="${UI_BASE}/knowledge/${encodeURIComponent(trace.nearMiss.entry)}">${trace.nearMiss.entry}</a> stopped by the <strong>${trace.nearMiss.gate}</strong> gate — ${trace.nearMiss.reason}${
        trace.nearMiss.gate === 'structural' ? h` <span class="muted">(a correct refusal: it is about another workload, so not counted as a gap)</span>` : ''
      }</p>`
    : ''
}
${trace.margin !== undefined ? h`<p>margin between the first two candidates: <span data-figure="margin">${trace.margin}</span></p>` : ''}
${
  trace.candidates.length > 0
    ? h`<table><thead><tr><th>candidate</th><th class="num">score</th></tr></thead><tbody>${trace.candidates.map(
        (c) => h`<tr><td><a href="${UI_BASE}/knowledge/${encodeURIComponent(c.entry)}">${c.entry}</a></td><td class="num">${c.score}</td></tr>`,
      )}</tbody></table>`
    : h`<p class="muted">no candidate in the catalog</p>`
}
${
  trace.steps && trace.steps.length > 0
    ? h`<h3>Refusals</h3><table><thead><tr><th>gate</th><th>entry</th><th>value</th><th>threshold</th><th>reason</th></tr></thead><tbody>${trace.steps.map(
        (s) =>
          h`<tr><td>${s.gate}</td><td>${s.entry ?? '—'}</td><td>${s.value === null ? '—' : String(s.value)}</td><td>${s.threshold === null ? '—' : String(s.threshold)}</td><td>${s.reason}</td></tr>`,
      )}</tbody></table>`
    : ''
}
</div>`;
}

export interface EntryPageData {
  entry: Entry;
  row: KnowledgeRow;
  weeks: ReadonlyArray<readonly [string, number, number, number, number]>;
  incidents: DeepReadonly<ViewIncident>[];
}

/** The weekly history's counts, one chart each: resolves are a part of answers, votes another count again, so none of them stack. */
const WEEK_SERIES: Array<Series & { index: 1 | 2 | 3 | 4; what: string }> = [
  { cls: 'k-runbook', label: 'answers', index: 1, what: 'times it was the answer shown' },
  { cls: 'k-instant', label: 'resolves', index: 2, what: 'of its instant recalls, resolved' },
  { cls: 'k-up', label: '👍 helpful votes', index: 3, what: '👍 votes on its threads' },
  { cls: 'k-down', label: '👎 unhelpful votes', index: 4, what: '👎 votes on its threads' },
];

function weekCharts(id: string, weeks: EntryPageData['weeks']): Html {
  return h`<div class="charts">${WEEK_SERIES.map(
    (s) =>
      h`<figure class="chart" data-chart="${s.label}"><figcaption>${s.label} per week <span class="muted">(${fmt(weeks.reduce((n, w) => n + w[s.index], 0))} in all)</span></figcaption>${stackedBars(
        {
          title: `${id}: ${s.what}, per week`,
          columns: weeks.map((w) => w[0]),
          series: [s],
          values: weeks.map((w) => [w[s.index]]),
          height: 120,
        },
      )}</figure>`,
  )}</div>`;
}

export function entryPage(d: EntryPageData, who?: string): string {
  const r = d.row;
  const body = h`<p><a href="${UI_BASE}/knowledge">← knowledge</a></p>
<h1 data-entry="${r.id}">${r.title}</h1>
<p class="muted">${r.id} · ${r.type} · ${r.status} · answers as ${r.answerKind === 'incident' ? '⚡ instant recall' : '📚 runbook'} ${flagChips(r.flags)}</p>
<div class="cards">
${card('recalls', 'recalls', r.recalls)}${card('resolved', 'resolved', r.resolved)}${card('👍 up votes', 'up', r.up)}${card('👎 down votes', 'down', r.down)}
${card('gate rate', 'rate', Math.round(r.rate * 1000) / 1000)}${card('factor', 'factor', Math.round(r.factor * 1000) / 1000)}
</div>
<p class="muted">last recalled ${when(r.lastRecalled)} · last validated ${r.lastValidated ?? 'never'}${r.servedSince ? ` · first served by this bot ${when(r.servedSince)}` : ''} · trend ${TREND[r.trend]}</p>
<h2>History (per week)</h2>
${
  d.weeks.length > 0
    ? h`${weekCharts(r.id, d.weeks)}<p class="note">Weeks start on Monday (UTC). Answers count the opens it answered; resolves, the episodes recalled with it that resolved that week; votes, the 👍 and 👎 cast on its threads.</p>`
    : h`<p class="muted">no history recorded yet</p>`
}
<h2>Incidents it answered</h2>
${
  d.incidents.length > 0
    ? h`<div class="scroll"><table><thead><tr><th>opened</th><th>trigger</th><th>answer</th><th>resolved</th><th>why</th></tr></thead><tbody>${d.incidents.map(
        (i) =>
          h`<tr data-open="${i.openId}"><td><a href="${UI_BASE}/incidents/${encodeURIComponent(i.openId)}">${when(i.at)}</a></td><td>${i.alertname ?? i.triggerKey}</td><td>${CLASS_LABEL[i.cls]}</td><td>${when(i.resolvedAt)}</td><td>${traceSummary(i.trace)}</td></tr>`,
      )}</tbody></table></div>`
    : h`<p class="muted">none recorded</p>`
}
<h2>Body</h2>
<pre>${readableSource(d.entry.body)}</pre>`;
  return layout(r.id, '/knowledge', body, who);
}

/** The trace in a few words: what recall did, and the best candidate. */
export function whyWords(t: DeepReadonly<OpenTrace>): string {
  if (t.answer === 'incident') return 'recalled';
  const shown = t.answer === 'runbook' ? 'runbook shown; ' : '';
  if (t.stoppedBy === 'structural' || t.stoppedBy === undefined) return `${shown}no instant candidate agreed`;
  return `${shown}stopped by the ${t.stoppedBy} gate`;
}

function traceSummary(t: DeepReadonly<OpenTrace> | undefined): Html {
  if (!t) return h`<span class="muted" data-gate-trace="none">no trace recorded</span>`;
  const top = t.candidates[0];
  return h`<span data-gate-trace="${t.stoppedBy ?? t.answer}">${whyWords(t)}${top ? ` · top ${top.entry} (${top.score})` : ''}</span>`;
}

// ── incidents ──

export function incidentsPage(items: DeepReadonly<ViewIncident>[], total: number, kept: number, page: number, f: IncidentQuery, who?: string): string {
  const body = h`<h1>Incidents</h1>
<p class="muted">${figure('incidents-kept', kept)} recent opens kept by the read model; newest first.</p>
<form class="filters" method="get" action="${UI_BASE}/incidents">
<label>trigger or alert <input type="search" name="trigger" value="${f.trigger ?? ''}" maxlength="500"></label>
<label>answer <select name="kind"><option value="">any</option>${CLASSES.map((c) => h`<option value="${c}"${f.kind === c ? h` selected` : ''}>${CLASS_LABEL[c]}</option>`)}</select></label>
<button type="submit">Filter</button></form>
<div class="scroll"><table><thead><tr><th>opened</th><th>alert</th><th>answer</th><th class="hide-narrow">entry</th><th>resolved</th><th class="hide-narrow">why</th></tr></thead>
<tbody>${items.map(
    (i) =>
      h`<tr data-open="${i.openId}" data-kind="${i.cls}"><td><a href="${UI_BASE}/incidents/${encodeURIComponent(i.openId)}">${when(i.at)}</a></td><td>${i.alertname ?? i.triggerKey}${i.title ? h`<br><span class="muted">${i.title}</span>` : ''}</td><td>${CLASS_LABEL[i.cls]}</td><td class="hide-narrow">${
        i.entry ? h`<a href="${UI_BASE}/knowledge/${encodeURIComponent(i.entry)}">${i.entry}</a>` : '—'
      }</td><td>${i.resolvedAt ? when(i.resolvedAt) : 'open'}</td><td class="hide-narrow">${traceSummary(i.trace)}</td></tr>`,
  )}${items.length === 0 ? h`<tr><td colspan="6" class="muted">no incident matches</td></tr>` : ''}</tbody></table></div>
${pager(`${UI_BASE}/incidents`, { trigger: f.trigger, kind: f.kind }, page, total)}`;
  return layout('Incidents', '/incidents', body, who);
}

export interface IncidentPageData {
  incident: DeepReadonly<ViewIncident>;
  thread: Thread | undefined;
  /** A chat permalink per surface, when the surface makes one. */
  permalinks: Array<{ transport: string; channel: string; id: string; url?: string }>;
  /** The curation item behind each KB PR URL it knows (subject and decision), for the PR's kind. */
  prKinds?: ReadonlyMap<string, { subject?: string; decision?: string }>;
  /** Display names of the people the page names (the bot's cache; absent: ids). */
  names?: PeopleNames;
}

/** A person on the page: their display name, the surface id (`slack:U0ANN`) on hover — one way everywhere the view names someone. */
function personHtml(user: string, via: string | undefined, names: PeopleNames | undefined, hint?: string): Html {
  const p = personFromKey(user, via);
  const name = names?.nameOf(p) ?? (hint && hint !== p.id ? hint : undefined);
  return h`<span class="person" title="${personKey(p)}">${personLabel(name ? { ...p, name } : p)}</span>`;
}

const TIMELINE_ICON: Record<string, string> = {
  fired: '🔥',
  opened: '🧠',
  posted: '💬',
  ack: '👀',
  vote: '🗳',
  note: '📝',
  fix: '🛠',
  silence: '🔕',
  finding: '🔎',
  pagerduty: '📟',
  resolved: '✅',
};

/** Seconds from `from` to `to` (ISO times), or undefined when either is missing or unreadable. */
function secondsBetween(from: string | undefined, to: string | undefined): number | undefined {
  const a = from === undefined ? NaN : Date.parse(from);
  const b = to === undefined ? NaN : Date.parse(to);
  return Number.isNaN(a) || Number.isNaN(b) ? undefined : (b - a) / 1000;
}

/** How long it took, measured from the alert's own start: to the first 👀, to the resolve. */
function spans(start: string, ackAt: string | undefined, resolvedAt: string | undefined): Html {
  const ack = secondsBetween(start, ackAt);
  const resolved = secondsBetween(start, resolvedAt);
  if (ack === undefined && resolved === undefined) return h``;
  return h`<p class="spans">${ack !== undefined ? h`👀 on it <data data-figure="incident-ack-s" value="${String(ack)}">${duration(ack)}</data> after it fired` : ''}${
    ack !== undefined && resolved !== undefined ? ' · ' : ''
  }${resolved !== undefined ? h`✅ resolved after <data data-figure="incident-resolve-s" value="${String(resolved)}">${duration(resolved)}</data>` : ''}</p>`;
}

export function incidentPage(d: IncidentPageData, who?: string): string {
  const i = d.incident;
  const t = d.thread;
  const timeline = t?.timeline ?? [];
  const prs = [...(i.prs ?? [])];
  if (t?.curation?.url && !prs.includes(t.curation.url)) prs.push(t.curation.url);
  const body = h`<p><a href="${UI_BASE}/incidents">← incidents</a></p>
<h1 data-open="${i.openId}">${i.alertname ?? i.triggerKey}</h1>
${i.title ? h`<p>${i.title}</p>` : ''}
<p class="muted">trigger <code>${i.triggerKey}</code>${t?.firedAt && t.firedAt !== i.at ? ` · fired ${when(t.firedAt)}` : ''} · opened ${when(i.at)} · ${
    i.resolvedAt ? `resolved ${when(i.resolvedAt)}` : 'not resolved'
  }${i.source ? ` · from ${i.source}` : ''}${
    i.threadOf ? h` · joined the storm thread <a href="${UI_BASE}/incidents/${encodeURIComponent(i.threadOf)}">${i.threadOf}</a>` : ''
  }</p>
${spans(t?.firedAt ?? i.at, t?.acks?.[0]?.at, i.resolvedAt)}
<h2>Answer</h2>
<p data-figure-kind="${i.cls}">${CLASS_LABEL[i.cls]}${i.entry ? h` · <a href="${UI_BASE}/knowledge/${encodeURIComponent(i.entry)}">${i.entry}</a>` : ''}${i.findingStatus ? ` · finding ${i.findingStatus}` : ''} · model calls ${figure('incident-calls', i.calls)} · tokens ${figure('incident-tokens', i.tokens)}</p>
<h2>Why (gate trace)</h2>
${traceBlock(i.trace, i.entry)}
<h2>Timeline</h2>
${
  timeline.length > 0
    ? h`<ol class="timeline">${timeline.map(
        (x) =>
          h`<li>${TIMELINE_ICON[x.kind] ?? '·'} <strong>${x.kind}</strong> ${when(x.at)}${x.user ? h` · ${personHtml(x.user, x.via, d.names)}` : ''}${x.via ? ` via ${x.via}` : ''}${x.detail ? h` — ${x.kind === 'silence' ? `until ${when(x.detail)}` : x.detail}` : ''}</li>`,
      )}</ol>`
    : h`<p class="muted">no timeline kept for this incident (older ledger, or its thread left the bounded registry)</p>`
}
${t?.acks && t.acks.length > 0 ? h`<p>On it: ${t.acks.map((a, n) => h`${n > 0 ? ', ' : ''}${personHtml(a.user, a.via, d.names, a.name)} (${a.via}, ${when(a.at)})`)}</p>` : ''}
<h2>Thread and KB</h2>
<ul>${d.permalinks.map((p) => h`<li>${p.transport}: ${p.url ? outsideLink(p.url, `${p.channel} · open the thread`) : `${p.channel} · message ${p.id}`}</li>`)}${
    d.permalinks.length === 0 ? h`<li class="muted">no thread recorded</li>` : ''
  }
${prs.map((u) => {
  const k = d.prKinds?.get(u) ?? (u === t?.curation?.url ? { decision: t.curation.decision } : undefined);
  return h`<li data-pr-kind="${prKind(k?.subject, k?.decision)}">KB PR (${prKind(k?.subject, k?.decision)}): ${outsideLink(u, u)}</li>`;
})}
${t?.curation ? h`<li>curation: ${t.curation.decision}${t.curation.detail ? ` (${t.curation.detail})` : ''}</li>` : ''}</ul>`;
  return layout(i.alertname ?? i.openId, '/incidents', body, who);
}

// ── gaps ──

export function gapsPage(
  g: Gaps,
  c: { recent: DeepReadonly<ViewCuration>[]; decisions: Readonly<Record<string, number>>; prs: DeepReadonly<ViewCuration>[] },
  who?: string,
): string {
  const decisions = Object.entries(c.decisions).sort((a, b) => b[1] - a[1]);
  const body = h`<h1>Where are the gaps?</h1>
<p class="muted">Figures on this page are recomputed at most once a minute.</p>
<h2>Recurring triggers with no knowledge</h2>
<p class="note">Opened at least twice, and no open of them ever showed an answer (instant recall or runbook).</p>
<div class="scroll"><table><thead><tr><th>trigger</th><th class="num">opens</th><th>last</th></tr></thead><tbody>${g.unanswered.map(
    (u) =>
      h`<tr data-trigger="${u.triggerKey}"><td><a href="${href(`${UI_BASE}/incidents`, { trigger: u.triggerKey })}">${u.alertname ?? u.triggerKey}</a><br><code class="muted">${u.triggerKey}</code></td><td class="num">${u.opens}</td><td>${when(u.lastAt)}</td></tr>`,
  )}${g.unanswered.length === 0 ? h`<tr><td colspan="3" class="muted">none</td></tr>` : ''}</tbody></table></div>
<h2>Near misses by gate</h2>
<p class="note">A candidate agreed, then a gate stopped it; triggers stopped at the same gate twice or more are listed.</p>
${
  g.nearMissByGate.length > 0
    ? g.nearMissByGate.map(
        (x) =>
          h`<h3>${x.gate} <span class="muted">(<span data-figure="near-miss-${x.gate}">${x.total}</span>)</span></h3><ul>${x.triggers.map(
            (t) => h`<li><a href="${href(`${UI_BASE}/incidents`, { trigger: t.triggerKey })}">${t.triggerKey}</a> ×${t.count}</li>`,
          )}${x.triggers.length === 0 ? h`<li class="muted">no trigger repeatedly</li>` : ''}</ul>`,
      )
    : h`<p class="muted">none recorded</p>`
}
<h2>Drafts humans closed unmerged</h2>
<p class="note">The ledger does not see a pull request close: the grooming sweeps read that from the forge (<code>reprise curate</code> lists them, and never re-drafts one).</p>
<h2>KB pull requests filed</h2>
<p class="note">Filed by the curator; their merge or close is the forge's to say. Kind: <em>finding</em> — a new entry drafted from an investigation's finding; <em>note</em> — an operator's note (a Concept entry); <em>fix</em> — the fix a person said in the thread; <em>postmortem</em> — a postmortem of the episode; <em>· edits an entry</em> — a later fix or cause written into the catalog's existing entry for its alert; <em>· added to an open PR</em> — written into the entry on the PR already open for it (one open PR per entry).</p>
<div class="scroll"><table><thead><tr><th>filed</th><th>PR</th><th>kind</th><th>decision</th><th>trigger</th></tr></thead><tbody>${c.prs.map(
    (p) =>
      h`<tr data-pr-kind="${prKind(p.subject, p.decision)}"><td>${when(p.at)}</td><td>${outsideLink(p.url, p.number !== undefined ? `#${p.number}` : (p.url ?? ''))}</td><td>${prKind(p.subject, p.decision)}</td><td>${p.decision}</td><td><a href="${UI_BASE}/incidents/${encodeURIComponent(p.openId)}">${p.triggerKey}</a></td></tr>`,
  )}${c.prs.length === 0 ? h`<tr><td colspan="5" class="muted">none</td></tr>` : ''}</tbody></table></div>
<h2>The curator's decisions</h2>
<ul>${decisions.map(([d, n]) => h`<li>${d}: <span data-figure="decision-${d}">${n}</span></li>`)}${decisions.length === 0 ? h`<li class="muted">none yet</li>` : ''}</ul>
<div class="scroll"><table><thead><tr><th>when</th><th>subject</th><th>decision</th><th>detail</th><th>incident</th></tr></thead><tbody>${c.recent.map(
    (x) =>
      h`<tr><td>${when(x.at)}</td><td>${x.subject}</td><td>${x.decision}</td><td>${x.detail ?? ''}${x.url ? h` ${outsideLink(x.url, x.number !== undefined ? `#${x.number}` : 'link')}` : ''}</td><td><a href="${UI_BASE}/incidents/${encodeURIComponent(x.openId)}">${x.triggerKey}</a></td></tr>`,
  )}</tbody></table></div>`;
  return layout('Gaps', '/gaps', body, who);
}

// ── access ──

export function loginPage(message?: string): string {
  const body = h`<div class="login"><h1>Sign in to the memory view</h1>
${message ? h`<p class="flag bad">${message}</p>` : ''}
<form method="post" action="${UI_SIGN_IN}"><label for="token">UI token (<code>ui.token</code>)</label>
<input id="token" name="token" type="password" autocomplete="current-password" required maxlength="1024"><button type="submit">Sign in</button></form>
<p class="note">The cookie this sets holds a keyed hash of the token, never the token; it is HttpOnly and SameSite=Strict.</p></div>`;
  return layout('Sign in', 'login', body);
}

export function deniedPage(modes: { token: boolean; header?: string }): string {
  const ways: Html[] = [h`<li>from this host (loopback), no credentials needed</li>`];
  if (modes.token)
    ways.push(h`<li>with the UI token: <a href="${UI_BASE}/login">sign in</a>, or send <code>Authorization: Bearer &lt;ui.token&gt;</code></li>`);
  if (modes.header) ways.push(h`<li>through the authenticating proxy that sets <code>${modes.header}</code></li>`);
  if (!modes.token && !modes.header)
    ways.push(
      h`<li>from elsewhere, set <code>ui.token</code> (REPRISE_UI_TOKEN) or <code>ui.trusted_header</code> with <code>ui.trusted_proxies</code> — see docs/memory-view.md</li>`,
    );
  const body = h`<h1>Not signed in</h1><p>The memory view is read-only, but what it shows is your incidents. It lets you in:</p><ul>${ways}</ul>`;
  return layout('Not signed in', 'denied', body);
}

export function messagePage(title: string, message: string): string {
  return layout(title, 'message', h`<h1>${title}</h1><p>${message}</p><p><a href="${UI_BASE}">Overview</a></p>`);
}

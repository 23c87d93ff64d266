/**
 * The RCA thread as structure (SPEC §9), rendered by each surface its own way: Block Kit for
 * Slack, HTML plus a plain body for Matrix, text for the console.
 *
 * Every string in a view is *text*, never markup: alert labels and annotations, catalog bodies,
 * user names and notes arrive here raw. A renderer escapes each string for its surface (so
 * `<!channel>`, `@room`, `<script>` and `*bold*` never take effect) and expresses emphasis,
 * code and links only through the structure below.
 */
import type { GateTraceStep, Severity } from '../types.js';
import type { Verdict } from '../verdict.js';
import { personLabel, type PersonRun } from '../people.js';

/**
 * One run of inline content. A bare string is plain text; a person is named by surface and id,
 * and each renderer shows them its own way (core/people.ts).
 */
export type Inline = string | { code: string } | { strong: string } | { link: { url: string; label: string } } | PersonRun;
/** A paragraph of inline runs. */
export type RichText = Inline[];

export type IncidentState = 'firing' | 'resolved' | 'silenced';

export interface LinkView {
  label: string;
  url: string;
}

/**
 * What the alert says about itself, as its author wrote it (bounded when the view is built;
 * text like every other string here).
 */
export interface AlertSaid {
  /** Its summary: one line. */
  summary?: string;
  /** Its description (or message): a few lines, cut with "…" past the card's bound. */
  description?: string;
  /** What the rule's query evaluated to (Grafana's `values`): "A=5, C=1". */
  value?: string;
}

/** What the thread leads with, in one line. */
export interface Headline {
  /** `checking`: a model is deciding (recall verification or an investigation on its way). */
  answer: 'instant' | 'runbook' | 'finding' | 'checking' | 'none';
  /** The entry's id and title (instant / runbook). */
  entry?: string;
  title?: string;
  confidence?: number;
}

/**
 * The thread root: compact, edited in place as the incident's state changes (firing →
 * resolved / silenced) on every surface.
 */
export interface CardView {
  kind: 'card';
  state: IncidentState;
  /** Why the state changed: "resolved after 23 min", "silenced by Ann until 14:00 UTC" (a string in cards recorded before people were runs). */
  stateNote?: RichText | string;
  alertname: string;
  /** `cluster/namespace/name`, or the instance / source when there is no workload. */
  where: string;
  severity: Severity;
  /** The alert's own summary, description and value; absent when it says nothing beyond its name. */
  said?: AlertSaid;
  verdict: Verdict;
  headline: Headline;
  /**
   * The alert's source (generatorURL), its runbook_url, dashboards, panel, silence and image,
   * from those fields only, with fixed labels; checked on arrival (http(s), `links.allowed_hosts`).
   */
  links: LinkView[];
  triggerKey: string;
  /** Opaque id of the incident this card is about; controls carry it back (button values). */
  controlsId: string;
  /** Show 👍 Accurate · 👎 Off-base · 🔕 Silence… (kept once resolved: verdicts on an answer often come after). */
  controls: boolean;
  /** Surface user / group ids to ping: critical firings only, never resolves. */
  mentions: string[];
  /** The 🔕 control may also silence in Alertmanager (configured, and the alert came from it). */
  amSilence?: boolean;
  /** What became of the Finding in the knowledge base (SPEC §10), once decided. */
  curation?: CurationLine;
  /** What people said of the answer so far, once someone voted: the thread's 👍/👎 and the entry's track record. */
  feedback?: string;
  /** Who is on it: "👀 Ann is on it · 4 min after it fired", people as person runs (a string in cards recorded before). */
  ack?: RichText | string;
  /** The trigger's (or a sibling's) past episodes, as history (issue 31): never an answer, never a gate. */
  seenBefore?: SeenBeforeView;
  /** Who is on call (issue 32): critical cards only; mentioned (pinged) only while firing, like `mentions`. */
  onCall?: OnCallView;
}

/**
 * "📟 on call: @ann (rotation · until 09:00 UTC)", or "📟 on call: unknown (why)". A person with
 * an `id` on this surface is mentioned its way (a Slack `<@U…>`, a Matrix pill); one without is
 * named as text. Names, `detail` and `unknown` are text.
 */
export interface OnCallView {
  people: ReadonlyArray<{ readonly name: string; readonly id?: string }>;
  /** Where the answer came from and until when: "PagerDuty · until 17:00 UTC". */
  detail: string;
  /** Why nobody is named. */
  unknown?: string;
}

/** The label every surface puts before the on-call people. */
export const ON_CALL_LABEL = '📟 on call: ';

/** What follows the people: " (rotation · until 09:00 UTC)", or "unknown (why)" when nobody is named. */
export function onCallTail(v: OnCallView): string {
  if (v.unknown !== undefined || v.people.length === 0) return `unknown (${v.unknown ?? 'nobody named'})`;
  return v.detail ? ` (${v.detail})` : '';
}

/**
 * "Seen before": the last episodes of the trigger (or of the same alert on a sibling workload or
 * host), one line of text each, newest first — when, how long, who acked, what fixed it in the
 * person's words, whether it held. Renderers label it as history and escape every line; people
 * are person runs (a string line is a card recorded before they were).
 */
export interface SeenBeforeView {
  lines: Array<RichText | string>;
  /** Episodes not shown, and where `/ui` lists them all (`path`; `url` when a public URL is configured). */
  more?: { count: number; path: string; url?: string };
}

/** The label every surface shows before the lines: history, not a trusted answer. */
export const SEEN_BEFORE_LABEL = '🕘 Seen before (history, not a diagnosis):';

/** "2 more in /ui" — the text of the more-link. */
export function seenBeforeMore(more: { count: number }): string {
  return `${more.count} more in /ui`;
}

/** The card's knowledge-base line: "📚 KB draft opened" with its link, "📚 not drafted: …". Text. */
export interface CurationLine {
  text: string;
  link?: LinkView;
}

/** One step of a runbook, with the command that follows it when the runbook gives one. */
export interface StepView {
  text: RichText;
  code?: string;
}

export type DetailSection =
  | {
      kind: 'instant';
      title: string;
      entry: string;
      entryUrl?: string;
      cause?: RichText[];
      resolution?: RichText[];
      triedBefore?: RichText[];
      /** "resolved 7 of 8 concluded recalls · 👍 3 👎 0" */
      track: string;
    }
  | { kind: 'runbook'; title: string; entry: string; entryUrl?: string; confidence: number; steps: StepView[]; track: string }
  | { kind: 'near_miss'; entry: string; gate: string; reason: string }
  | { kind: 'refused'; entry: string; reason: string }
  | { kind: 'fall_through'; note: string }
  | { kind: 'closest'; entries: string[] }
  | FindingSection
  | { kind: 'degraded'; reason: string; facts: string[]; closest: Array<{ entry: string; title: string }> };

/** An investigation's (or a verified recall's) conclusion, SPEC §2 Finding. */
export interface FindingSection {
  kind: 'finding';
  /** completed · exhausted (partial) · … */
  status: string;
  /** Why it is not completed, in one sentence. */
  statusDetail?: string;
  summary: string;
  verdict: Verdict;
  confidence: number;
  causes: Array<{ cause: string; confidence: number; evidence: string[] }>;
  actions: Array<{ action: string; reversible: boolean }>;
  ruledOut: Array<{ cause: string; reason: string }>;
  openQuestions: string[];
  dataGaps: string[];
  changeRef?: string;
  /** The adversarial review kept the cause (true), rejected it (false), or did not run. */
  verified?: boolean;
  /** The catalog entry a verified recall answered from. */
  entry?: string;
}

/** The full analysis, posted inside the thread (or under the card on surfaces without threads). */
export interface DetailView {
  kind: 'detail';
  /** e.g. "recalled at 0.70 (exact match × no track record yet; capped at 0.70: no live-state check ran)" */
  confidence?: string;
  sections: DetailSection[];
  /** Label → value, in order: alert, resource, started, recurrence. */
  facts: Array<[string, string]>;
  /** The alert's labels as a compact table. */
  labels: Array<[string, string]>;
  triggerKey: string;
  /** verified · model calls · tokens · cost · investigator version, once investigations run. */
  footer?: string;
}

/** A short message in the thread: "✅ resolved after 23 min", "📝 saved", "🔕 silenced by …". */
export interface NoticeView {
  kind: 'notice';
  /** What it is about (renderers may style by it; the console transcript records it). */
  topic: 'resolved' | 'silenced' | 'note' | 'vote' | 'status' | 'info';
  icon: string;
  text: RichText;
  /** Surface user ids the notice pings (the on-call reminder); absent: it pings nobody. */
  mentions?: string[];
}

export type ReplyView = DetailView | NoticeView;

/** A private answer to one user (slash commands, button clicks). */
export interface EphemeralView {
  kind: 'ephemeral';
  title: string;
  body: RichText[];
  /** Recall's gate trace, for `/reprise recall`. */
  trace?: GateTraceStep[];
}

export type MessageView = CardView | ReplyView | EphemeralView;

/** What a card update changes: applied to the card as it was posted (owner pings are not repeated). */
export interface CardPatch {
  kind: 'card_patch';
  state?: IncidentState;
  stateNote?: RichText | string;
  headline?: Headline;
  verdict?: Verdict;
  curation?: CurationLine;
  feedback?: string;
  /** The card's ack line ('' or [] removes it). */
  ack?: RichText | string;
  /** Who is on call, when the answer came after the card was posted (issue 32). */
  onCall?: OnCallView;
}

/** The card after a change of state or of answer. */
export function patchCard(card: CardView, patch: CardPatch): CardView {
  const out: CardView = { ...card, mentions: [] };
  if (patch.state) out.state = patch.state;
  if (patch.stateNote !== undefined) out.stateNote = patch.stateNote;
  if (patch.headline) out.headline = patch.headline;
  if (patch.verdict) out.verdict = patch.verdict;
  if (patch.curation) out.curation = patch.curation;
  if (patch.feedback !== undefined) out.feedback = patch.feedback;
  if (patch.onCall) out.onCall = patch.onCall;
  if (patch.ack !== undefined) {
    if (patch.ack === '' || patch.ack.length === 0) delete out.ack;
    else out.ack = patch.ack;
  }
  return out;
}

/** Confidence as a dot (SPEC §9): 🟢 ≥ 0.8 · 🟡 ≥ 0.5 · ⚪ below. */
export function confidenceDot(c: number): string {
  return c >= 0.8 ? '🟢' : c >= 0.5 ? '🟡' : '⚪';
}

/** All the text of an inline run (for plain-text fallbacks and tests). */
export function inlineText(r: Inline): string {
  if (typeof r === 'string') return r;
  if ('code' in r) return r.code;
  if ('strong' in r) return r.strong;
  if ('person' in r) return personLabel(r.person);
  return r.link.label;
}

/** A card line that may be a string (recorded before people were runs) as a paragraph. */
export function asRichText(p: RichText | string | undefined): RichText {
  return p === undefined ? [] : typeof p === 'string' ? [p] : p;
}

/** Plain text of a paragraph. */
export function richText(p: RichText): string {
  return p.map(inlineText).join('');
}

/**
 * Splits catalog markdown (already human-reviewed, still shown as text) into paragraphs with
 * inline code spans kept as code: `kubectl rollout undo` stays a command on every surface.
 * Linear: one pass over the text, no regex backtracking.
 */
export function markdownParagraphs(md: string): RichText[] {
  const out: RichText[] = [];
  for (const para of md.replace(/\r/g, '').split(/\n{2,}/)) {
    const text = para.trim();
    if (text === '') continue;
    const runs: RichText = [];
    let i = 0;
    while (i < text.length) {
      const open = text.indexOf('`', i);
      const close = open < 0 ? -1 : text.indexOf('`', open + 1);
      if (open < 0 || close < 0) {
        runs.push(text.slice(i));
        break;
      }
      if (open > i) runs.push(text.slice(i, open));
      if (close > open + 1) runs.push({ code: text.slice(open + 1, close) });
      i = close + 1;
    }
    out.push(runs);
  }
  return out;
}

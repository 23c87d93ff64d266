/**
 * The thread views (core/chat/thread-view) as Mattermost markdown posts (SPEC §9): the card a
 * root post, the analysis and notices replies in its thread. Pure. Every string of a view is
 * escaped by mattermost-markdown; markup comes only from the structure here. Posts are cut to
 * {@link POST_BUDGET_CHARS} with "…" (the server refuses longer messages).
 */
import {
  asRichText,
  confidenceDot,
  ON_CALL_LABEL,
  onCallTail,
  SEEN_BEFORE_LABEL,
  seenBeforeMore,
  type CardView,
  type DetailSection,
  type DetailView,
  type EphemeralView,
  type IncidentState,
  type OnCallView,
  type ReplyView,
} from '../../core/chat/thread-view.js';
import type { Severity } from '../../core/types.js';
import type { Verdict } from '../../core/verdict.js';
import { mdCode, mdCodeBlock, mdLine, mdLink, mdMention, mdRich, mdStrong, mdText } from './mattermost-markdown.js';

/** Mattermost's default `MaxPostSize` is 16 383 characters; some room is kept for the cut line. */
export const POST_BUDGET_CHARS = 16_000;

const SEVERITY: Record<Severity, string> = { critical: '🔴 critical', warning: '🟠 warning', info: '🔵 info', none: '⚪ severity none' };
const VERDICT: Record<Verdict, string> = {
  action_required: '🔥 action required',
  action_suggested: '🛠 action suggested',
  inconclusive: '❓ inconclusive',
  no_action: '✅ no action',
};
const STATE: Record<IncidentState, string> = { firing: '🚨 firing', resolved: '✅ resolved', silenced: '🔕 silenced' };

/** The reactions Mattermost offers instead of buttons (counted on the bot's own posts only). */
export const CONTROLS_HINT = 'React 👍 accurate · 👎 off-base · 🔕 silence 4h · 👀 on it';
export const AM_SILENCE_HINT = ' · reply "@reprise silence 4h am" to silence in Alertmanager too';

const conf = (c: number | undefined): string => (c === undefined || !Number.isFinite(c) ? '' : ` · ${confidenceDot(c)} ${c.toFixed(2)}`);

function headline(card: CardView): string {
  const h = card.headline;
  const v = VERDICT[card.verdict];
  if (h.answer === 'instant') return `${v} · ⚡ Instant recall — ${mdStrong(h.title ?? 'untitled entry')}${conf(h.confidence)}`;
  if (h.answer === 'runbook') return `${v} · 📚 Runbook — ${mdStrong(h.title ?? 'untitled runbook')} (a guide, not a diagnosis)${conf(h.confidence)}`;
  if (h.answer === 'finding') return `${v} · 🧭 ${mdStrong(h.title ?? 'finding')}${conf(h.confidence)}`;
  if (h.answer === 'checking') return `${v} · 🔎 ${mdLine(h.title ?? 'checking with the model…')}`;
  return `${v} · No trusted memory for this alert — details in the thread`;
}

/** The card's lines (markdown). */
export function renderCard(card: CardView): string {
  const out = [
    `🔍 ${mdStrong(card.alertname)} — ${mdCode(card.where)} · ${SEVERITY[card.severity]} · ${STATE[card.state]}${card.stateNote ? ` (${mdRich(asRichText(card.stateNote))})` : ''}`,
  ];
  const s = card.said;
  if (s?.summary) out.push(mdStrong(s.summary));
  if (s?.description) out.push('', mdText(s.description), '');
  if (s?.value) out.push(`_Value:_ ${mdLine(s.value)}`);
  out.push(headline(card));
  const sb = card.seenBefore;
  if (sb && sb.lines.length > 0) {
    out.push('', mdLine(SEEN_BEFORE_LABEL), ...sb.lines.map((l) => `• ${mdRich(asRichText(l))}`));
    if (sb.more) out.push(sb.more.url ? mdLink(seenBeforeMore(sb.more), sb.more.url) : `${mdLine(seenBeforeMore(sb.more))}: ${mdCode(sb.more.path)}`);
  }
  if (card.curation) out.push(`📚 ${mdLine(card.curation.text)}${card.curation.link ? ` ${mdLink(card.curation.link.label, card.curation.link.url)}` : ''}`);
  if (card.feedback) out.push(`🗳 ${mdLine(card.feedback)}`);
  if (card.ack) out.push(mdRich(asRichText(card.ack)));
  if (card.onCall) out.push(onCallLine(card.onCall));
  if (card.links.length > 0) out.push(`Links: ${card.links.map((l) => mdLink(l.label, l.url)).join(' · ')}`);
  const mentions = card.mentions.map(mdMention).filter((m): m is string => m !== undefined);
  if (mentions.length > 0) out.push(`cc ${mentions.join(' ')}`);
  if (card.controls) out.push(`_${CONTROLS_HINT}${card.amSilence ? AM_SILENCE_HINT : ''}_`);
  return fit(out);
}

function section(s: DetailSection): string[] {
  const entry = (id: string, url?: string): string => (url ? mdLink(id, url) : mdCode(id));
  switch (s.kind) {
    case 'instant': {
      const out = ['⚡ **Instant recall** — answered from your knowledge base; no investigation was run', mdStrong(s.title)];
      if (s.cause) out.push(`**Known cause:** ${s.cause.map(mdRich).join('\n')}`);
      if (s.resolution) out.push(`**Resolution (human-reviewed):** ${s.resolution.map(mdRich).join('\n')}`);
      if (s.triedBefore) out.push('❌ **Tried before (did not work):**', ...s.triedBefore.map(mdRich));
      out.push(`Entry: ${entry(s.entry, s.entryUrl)} · Track record: ${mdLine(s.track)}`);
      return out;
    }
    case 'runbook': {
      const out = [`📚 **Runbook** — ${mdStrong(s.title)} (a guide, not a diagnosis) · ${confidenceDot(s.confidence)} ${s.confidence.toFixed(2)}`];
      for (const step of s.steps.slice(0, 100)) {
        out.push(`• ${mdRich(step.text)}`);
        if (step.code !== undefined) out.push(...mdCodeBlock(step.code));
      }
      out.push(`${entry(s.entry, s.entryUrl)} · ${mdLine(s.track)}`);
      return out;
    }
    case 'near_miss':
      return [`🔎 **Near miss** — ${mdCode(s.entry)} was stopped by the ${mdLine(s.gate)} gate: ${mdLine(s.reason)}`];
    case 'refused':
      return [`⛔ **Recall refused** — ${mdCode(s.entry)}: ${mdLine(s.reason)}`];
    case 'fall_through':
      return [`⚠️ **Fall-through** — ${mdLine(s.note)}`];
    case 'closest':
      return [`Closest catalog entries (not trusted): ${s.entries.map((e) => mdCode(e)).join(', ')}`];
    case 'finding': {
      const status = s.status === 'completed' ? '' : ` · ${mdLine(s.status)}${s.statusDetail ? `: ${mdLine(s.statusDetail)}` : ''}`;
      const verified = s.verified === undefined ? '' : s.verified ? ' · verified ✓' : ' · verify rejected ✗';
      const out = [`🧭 **Finding** — ${VERDICT[s.verdict]} · ${confidenceDot(s.confidence)} ${s.confidence.toFixed(2)}${verified}${status}`, mdText(s.summary)];
      if (s.entry) out.push(`Answered from your knowledge base: ${mdCode(s.entry)}`);
      s.causes.forEach((c, i) => {
        out.push(`${i + 1}\\. ${mdLine(c.cause)} (${c.confidence.toFixed(2)})`);
        for (const e of c.evidence) out.push(`  evidence: ${mdLine(e)}`);
      });
      for (const a of s.actions) out.push(`→ ${mdLine(a.action)} ${a.reversible ? '(reversible)' : '(**NOT** reversible)'}`);
      for (const r of s.ruledOut) out.push(`✗ ruled out: ${mdLine(r.cause)} — ${mdLine(r.reason)}`);
      for (const q of s.openQuestions) out.push(`? ${mdLine(q)}`);
      for (const g of s.dataGaps) out.push(`⚠ could not check: ${mdLine(g)}`);
      if (s.changeRef) out.push(`change: ${mdLine(s.changeRef)}`);
      return out;
    }
    case 'degraded':
      return [
        `⚠️ **Degraded answer** — the model could not conclude (${mdLine(s.reason)}); these are facts and the closest entries only`,
        ...s.facts.map((f) => `• ${mdLine(f)}`),
        ...s.closest.map((c) => `• ${mdCode(c.entry)} — ${mdLine(c.title)}`),
      ];
  }
}

export function renderDetail(d: DetailView): string {
  const out: string[] = [];
  if (d.confidence) out.push(mdLine(d.confidence));
  for (const s of d.sections) out.push('', ...section(s));
  out.push('', `Facts: ${d.facts.map(([k, v]) => `${mdLine(k, 60)} ${mdLine(v)}`).join(' · ')}`);
  if (d.labels.length > 0)
    out.push(
      `Labels: ${d.labels
        .slice(0, 100)
        .map(([k, v]) => mdCode(`${k}=${v}`, 200))
        .join(' ')}`,
    );
  out.push(`Trigger: ${mdCode(d.triggerKey)}`);
  if (d.footer) out.push(mdLine(d.footer));
  return fit(out);
}

/**
 * "📟 on call: @ann (rotation · until 09:00 UTC)": a person with a Mattermost username is
 * mentioned by it (Mattermost mentions by username), anyone else named as text.
 */
function onCallLine(v: OnCallView): string {
  const people = v.unknown === undefined ? v.people.map((p) => (p.id ? mdMention(p.id) : undefined) ?? mdLine(p.name, 120)) : [];
  return `${mdLine(ON_CALL_LABEL)}${people.join(', ')}${mdLine(onCallTail(v))}`;
}

export function renderReply(view: ReplyView): string {
  if (view.kind === 'detail') return renderDetail(view);
  // The ids a notice pings (the on-call reminder) follow it as mentions.
  const pings = view.kind === 'notice' ? (view.mentions ?? []).map(mdMention).filter((m): m is string => m !== undefined) : [];
  return fit([`${view.icon} ${mdRich(view.text)}${pings.length > 0 ? ` ${pings.join(' ')}` : ''}`]);
}

export function renderEphemeral(view: EphemeralView): string {
  const out = [mdStrong(view.title), ...view.body.map(mdRich)];
  if (view.trace && view.trace.length > 0) {
    out.push('', '_Gate trace:_');
    for (const t of view.trace.slice(0, 50)) out.push(`${t.passed ? '✓' : '✗'} ${mdLine(t.gate)} ${t.entry ? mdCode(t.entry) : ''} — ${mdLine(t.reason)}`);
  }
  return fit(out);
}

/**
 * The lines joined, cut at a line boundary to the budget, with a closing fence when the cut
 * falls inside a code block.
 */
export function fit(lines: string[], budget = POST_BUDGET_CHARS): string {
  const cut = '… _cut to fit the Mattermost post size limit_';
  let used = 0;
  let fence: string | undefined;
  const out: string[] = [];
  for (const l of lines) {
    if (used + l.length + 1 > budget - cut.length - 16) {
      if (fence) out.push(fence);
      out.push(cut);
      return out.join('\n');
    }
    out.push(l);
    used += l.length + 1;
    const f = /^(`{3,})$/.exec(l)?.[1];
    if (f) fence = fence === f ? undefined : (fence ?? f);
  }
  return out.join('\n');
}

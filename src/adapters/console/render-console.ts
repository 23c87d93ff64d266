/**
 * Thread views as console text. Everything from outside (alert text, catalog text, user names)
 * is escaped with the shared helper: control, bidi and zero-width characters become visible,
 * and text meant for one line keeps its newlines escaped, so nothing can forge a line.
 */
import { escapeControl, escapeLine } from '../../core/render/escape-text.js';
import { onCallText } from '../../core/oncall/oncall-view.js';
import { personLabel } from '../../core/people.js';
import {
  asRichText,
  confidenceDot,
  SEEN_BEFORE_LABEL,
  seenBeforeMore,
  richText,
  type CardView,
  type DetailSection,
  type DetailView,
  type EphemeralView,
  type ReplyView,
  type RichText,
} from '../../core/chat/thread-view.js';

const STATE: Record<CardView['state'], string> = { firing: '🚨 firing', resolved: '✅ resolved', silenced: '🔕 silenced' };
const VERDICT: Record<CardView['verdict'], string> = {
  action_required: '🔥 action required',
  action_suggested: '🛠 action suggested',
  inconclusive: '❓ inconclusive',
  no_action: '✅ no action',
};

export { confidenceDot };

/** Confidence as the other surfaces show it: the dot and its number (`🟡 0.71`); '' when there is none. */
function confidence(c: number | undefined): string {
  return c === undefined || !Number.isFinite(c) ? '' : `${confidenceDot(c)} ${c.toFixed(2)}`;
}

/** Multi-line text as a human reads it: inline code in backticks (the console has no other markup). */
function para(p: RichText): string {
  return escapeControl(
    p
      .map((r) =>
        typeof r === 'string'
          ? r
          : 'code' in r
            ? `\`${r.code}\``
            : 'strong' in r
              ? r.strong
              : 'person' in r
                ? escapeLine(personLabel(r.person))
                : `${r.link.label} <${r.link.url}>`,
      )
      .join(''),
  );
}

export function renderConsoleCard(card: CardView): string[] {
  const out = [
    `🔍 ${escapeLine(card.alertname)} — ${escapeLine(card.where)} · severity ${card.severity} · ${STATE[card.state]}${card.stateNote ? ` (${escapeLine(richText(asRichText(card.stateNote)))})` : ''}`,
  ];
  const s = card.said;
  if (s?.summary) out.push(`  ${escapeLine(s.summary)}`);
  // Indented line by line: a description cannot start a line that reads as the bot's own.
  if (s?.description)
    out.push(
      ...escapeControl(s.description.replace(/\t/g, ' '))
        .split('\n')
        .map((l) => `    ${l}`),
    );
  if (s?.value) out.push(`  Value: ${escapeLine(s.value)}`);
  const h = card.headline;
  const conf = confidence(h.confidence);
  const scored = conf ? ` · ${conf}` : '';
  if (h.answer === 'instant') out.push(`${VERDICT[card.verdict]} · ⚡ Instant recall: ${escapeLine(h.title ?? '')}${scored}`);
  else if (h.answer === 'runbook') out.push(`${VERDICT[card.verdict]} · 📚 Runbook: ${escapeLine(h.title ?? '')} (a guide, not a diagnosis)${scored}`);
  else if (h.answer === 'finding') out.push(`${VERDICT[card.verdict]} · 🧭 ${escapeLine(h.title ?? '')}${scored}`);
  else if (h.answer === 'checking') out.push(`${VERDICT[card.verdict]} · 🔎 ${escapeLine(h.title ?? 'checking with the model…')}`);
  else out.push(`${VERDICT[card.verdict]} · no trusted memory for this alert`);
  if (card.seenBefore && card.seenBefore.lines.length > 0) {
    const h = card.seenBefore;
    out.push(SEEN_BEFORE_LABEL, ...h.lines.map((l) => `  • ${escapeLine(richText(asRichText(l)))}`));
    if (h.more) out.push(`  ${seenBeforeMore(h.more)}: ${escapeLine(h.more.url ?? h.more.path)}`);
  }
  if (card.curation)
    out.push(
      `📚 ${escapeLine(card.curation.text)}${card.curation.link ? ` ${escapeLine(card.curation.link.label)} <${escapeLine(card.curation.link.url)}>` : ''}`,
    );
  if (card.feedback) out.push(`🗳 ${escapeLine(card.feedback)}`);
  if (card.ack && card.ack.length > 0) out.push(escapeLine(richText(asRichText(card.ack))));
  if (card.onCall) out.push(escapeLine(richText(onCallText(card.onCall, 'console'))));
  if (card.links.length > 0) out.push(`Links: ${card.links.map((l) => `${l.label} ${escapeLine(l.url)}`).join(' · ')}`);
  if (card.mentions.length > 0) out.push(`cc ${card.mentions.map(escapeLine).join(' ')}`);
  return out;
}

function section(s: DetailSection): string[] {
  switch (s.kind) {
    case 'instant': {
      // Plain text: the console shows no markup, so no `*…*` markers around labels.
      const out = ['⚡ Instant recall — answered from your knowledge base; no investigation was run', escapeLine(s.title)];
      if (s.cause) out.push(`Known cause: ${s.cause.map(para).join('\n')}`);
      if (s.resolution) out.push(`Resolution (human-reviewed): ${s.resolution.map(para).join('\n')}`);
      if (s.triedBefore) out.push('❌ Tried before (did not work):', ...s.triedBefore.map(para));
      out.push(`Entry: ${escapeLine(s.entryUrl ?? s.entry)}`, `Track record: ${s.track}`);
      return out;
    }
    case 'runbook': {
      const out = [`📚 Runbook — ${escapeLine(s.title)} (a guide, not a diagnosis) · ${confidence(s.confidence)}`];
      for (const step of s.steps) {
        out.push(`  • ${para(step.text)}`);
        if (step.code !== undefined)
          out.push(
            ...escapeControl(step.code)
              .split('\n')
              .map((l) => `      $ ${l}`),
          );
      }
      out.push(`  ${escapeLine(s.entryUrl ?? s.entry)} · ${s.track}`);
      return out;
    }
    case 'near_miss':
      return [`🔎 Near miss — ${escapeLine(s.entry)} was stopped by the ${s.gate} gate: ${escapeLine(s.reason)}`];
    case 'refused':
      return [`⛔ Recall refused — ${escapeLine(s.entry)}: ${escapeLine(s.reason)}`];
    case 'fall_through':
      return [`⚠️ Fall-through — ${escapeLine(s.note)}`];
    case 'closest':
      return [`Closest catalog entries (not trusted): ${s.entries.map(escapeLine).join(', ')}`];
    case 'finding': {
      const out = [
        `🧭 Finding — ${VERDICT[s.verdict]} · ${confidence(s.confidence)}${s.verified === undefined ? '' : s.verified ? ' · verified ✓' : ' · verify rejected ✗'}${s.status === 'completed' ? '' : ` · ${s.status}${s.statusDetail ? `: ${escapeLine(s.statusDetail)}` : ''}`}`,
        escapeLine(s.summary),
      ];
      if (s.entry) out.push(`Answered from your knowledge base: ${escapeLine(s.entry)}`);
      s.causes.forEach((c, i) => {
        out.push(`  ${i + 1}. ${escapeLine(c.cause)} (${c.confidence.toFixed(2)})`);
        for (const e of c.evidence) out.push(`     evidence: ${escapeLine(e)}`);
      });
      for (const a of s.actions) out.push(`  → ${escapeLine(a.action)} ${a.reversible ? '(reversible)' : '(NOT reversible)'}`);
      for (const r of s.ruledOut) out.push(`  ✗ ruled out: ${escapeLine(r.cause)} — ${escapeLine(r.reason)}`);
      for (const q of s.openQuestions) out.push(`  ? ${escapeLine(q)}`);
      for (const g of s.dataGaps) out.push(`  ⚠ could not check: ${escapeLine(g)}`);
      if (s.changeRef) out.push(`  change: ${escapeLine(s.changeRef)}`);
      return out;
    }
    case 'degraded':
      return [
        `⚠️ Degraded answer — the model could not conclude (${escapeLine(s.reason)}); these are facts and the closest entries only`,
        ...s.facts.map((f) => `  • ${escapeLine(f)}`),
        ...s.closest.map((c) => `  • ${escapeLine(c.entry)} — ${escapeLine(c.title)}`),
      ];
  }
}

export function renderConsoleDetail(d: DetailView): string[] {
  const out: string[] = [];
  if (d.confidence) out.push(`${d.confidence}`);
  for (const s of d.sections) out.push('', ...section(s));
  out.push(
    '',
    `Facts: ${d.facts.map(([k, v]) => (k === 'recurrence' ? (v.startsWith('#') ? `🔁 ${escapeLine(v)}` : escapeLine(v)) : `${k} ${escapeLine(v)}`)).join(' · ')}`,
  );
  if (d.labels.length > 0)
    out.push(`Labels: ${d.labels.map(([k, v]) => `${escapeLine(k)}=${escapeLine(v.length > 120 ? `${v.slice(0, 120)}…` : v)}`).join(' ')}`);
  out.push(`Trigger: ${escapeLine(d.triggerKey)}`);
  if (d.footer) out.push(escapeLine(d.footer));
  return out;
}

/** The whole thread root on the console: the card, the analysis under it, the controls. */
export function renderConsoleThread(card: CardView, detail: DetailView | undefined): string {
  const lines = renderConsoleCard(card);
  if (detail) lines.push(...renderConsoleDetail(detail));
  if (card.controls) lines.push(`👍 Accurate · 👎 Off-base · 🔕 Silence… (1 h / 4 h / 24 h${card.amSilence ? '; + Alertmanager' : ''})`);
  return lines.join('\n');
}

export function renderConsoleReply(view: ReplyView): string {
  if (view.kind === 'detail') return renderConsoleDetail(view).join('\n');
  return `${view.icon} ${para(view.text)}`;
}

export function renderConsoleEphemeral(view: EphemeralView): string {
  const out = [`${escapeLine(view.title)}`, ...view.body.map(para)];
  for (const t of view.trace ?? []) out.push(`  ${t.passed ? '✓' : '✗'} ${t.gate} ${escapeLine(t.entry ?? '')} — ${escapeLine(t.reason)}`);
  return out.join('\n');
}

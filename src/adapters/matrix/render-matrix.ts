/**
 * The thread views (core/chat/thread-view) as Matrix `m.room.message` content: an `m.notice`
 * with a plain `body` and an `org.matrix.custom.html` `formatted_body` (SPEC §9). Pure.
 *
 * Untrusted text never takes effect: every string of a view is escaped for each output
 * (matrix-markup), markup comes only from the view's structure, and every event carries
 * `m.mentions` — empty unless the card names owners to ping — so `@room` or a display name in
 * an alert's annotations notifies nobody. Content is laid out within {@link CONTENT_BUDGET_BYTES}
 * (matrix-layout), cut with "…" and a link when it would not fit.
 * Over 450 lines on purpose: one renderer per thread view kind, kept together so every view
 * gets the same escaping and size budget; split it by view kind when one grows its own helpers.
 */
import {
  asRichText,
  confidenceDot,
  SEEN_BEFORE_LABEL,
  seenBeforeMore,
  type CardView,
  type DetailSection,
  type DetailView,
  type EphemeralView,
  type IncidentState,
  type NoticeView,
  type ReplyView,
  type StepView,
} from '../../core/chat/thread-view.js';
import type { Verdict } from '../../core/verdict.js';
import { onCallIds, onCallText } from '../../core/oncall/oncall-view.js';
import type { Severity } from '../../core/types.js';

import { layout, jsonBytes, type Block, type Piece } from './matrix-layout.js';
import { html, htmlLine, inline, isUserId, link, plain, plainLine, safeUrl, userPermalink } from './matrix-markup.js';

/**
 * What one event's content may take: the limit less room for the envelope the homeserver adds
 * (ids, `prev_events`, `auth_events`, hashes, signatures — about 2 KiB in practice).
 */
export const CONTENT_BUDGET_BYTES = 60_000;

/** Caps on single untrusted strings (code points), so one huge annotation cannot crowd out the rest. */
const CAP = { line: 300, text: 2_000, code: 4_000, cell: 500, key: 120 } as const;
/** Most labels and runbook steps shown before the message says "…". */
const MAX_ROWS = 100;

export interface MatrixMentions {
  user_ids?: string[];
  room?: boolean;
}

/** `m.room.message` content as Reprise sends it. */
export interface MatrixMessageContent {
  msgtype: 'm.notice';
  body: string;
  format: 'org.matrix.custom.html';
  formatted_body: string;
  'm.mentions': MatrixMentions;
  'm.relates_to'?: MatrixRelation;
  'm.new_content'?: Omit<MatrixMessageContent, 'm.relates_to' | 'm.new_content'>;
}

export type MatrixRelation =
  | { rel_type: 'm.thread'; event_id: string; is_falling_back: boolean; 'm.in_reply_to': { event_id: string } }
  | { rel_type: 'm.replace'; event_id: string }
  | { 'm.in_reply_to': { event_id: string } };

/** Where the rest of a cut message can be read. */
export interface RenderOptions {
  moreUrl?: string;
  /** Bytes the content may take; {@link CONTENT_BUDGET_BYTES} by default. */
  budget?: number;
}

const SEVERITY: Record<Severity, string> = { critical: '🔴 critical', warning: '🟠 warning', info: '🔵 info', none: '⚪ severity none' };
const VERDICT: Record<Verdict, string> = {
  action_required: '🔥 action required',
  action_suggested: '🛠 action suggested',
  inconclusive: '❓ inconclusive',
  no_action: '✅ no action',
};
const STATE: Record<IncidentState, string> = { firing: '🚨 firing', resolved: '✅ resolved', silenced: '🔕 silenced' };

/** The reactions Matrix offers instead of buttons (counted on the bot's own messages only). */
export const CONTROLS_HINT = 'React 👍 accurate · 👎 off-base · 🔕 silence 4h';
/** Added when a 🔕 can silence in Alertmanager too. */
export const AM_SILENCE_HINT = ' · reply "!reprise silence 4h am" to silence in Alertmanager too';

const para = (piece: Piece): Block => ({ kind: 'para', piece });
const text = (s: string): Piece => ({ text: plain(s, CAP.text), html: html(s, CAP.text) });
const trusted = (s: string): Piece => ({ text: s, html: s });
const cat = (...ps: Piece[]): Piece => ({ text: ps.map((p) => p.text).join(''), html: ps.map((p) => p.html).join('') });
const strong = (p: Piece): Piece => ({ text: p.text, html: `<strong>${p.html}</strong>` });
const em = (p: Piece): Piece => ({ text: p.text, html: `<em>${p.html}</em>` });
const line = (s: string, max: number = CAP.line): Piece => ({ text: plainLine(s, max), html: htmlLine(s, max) });
const code = (s: string): Piece => ({ text: `\`${plainLine(s, CAP.line)}\``, html: `<code>${htmlLine(s, CAP.line)}</code>` });

function content(blocks: Block[], mentions: string[], opts: RenderOptions, fallbackUrl?: string): MatrixMessageContent {
  const url = opts.moreUrl ?? fallbackUrl;
  const more =
    url && safeUrl(url)
      ? cat(trusted('… '), em(trusted('cut to fit the Matrix event size limit')), trusted(' — '), link('read the rest', url, CAP.line))
      : cat(trusted('… '), em(trusted('cut to fit the Matrix event size limit')));
  const users = mentions.filter(isUserId);
  const envelope = jsonBytes(JSON.stringify({ msgtype: 'm.notice', format: 'org.matrix.custom.html', 'm.mentions': users.length ? { user_ids: users } : {} }));
  const { body, formatted_body } = layout(blocks, (opts.budget ?? CONTENT_BUDGET_BYTES) - envelope - 64, more);
  return {
    msgtype: 'm.notice',
    body,
    format: 'org.matrix.custom.html',
    formatted_body,
    'm.mentions': users.length ? { user_ids: users } : {},
  };
}

function confidence(c: number | undefined): Piece {
  if (c === undefined || !Number.isFinite(c)) return trusted('');
  return trusted(` · ${confidenceDot(c)} ${c.toFixed(2)}`);
}

function headline(card: CardView): Piece {
  const h = card.headline;
  if (h.answer === 'instant') return cat(trusted('⚡ Instant recall — '), strong(line(h.title ?? 'untitled entry')), confidence(h.confidence));
  if (h.answer === 'runbook') return cat(trusted('📚 Runbook — '), strong(line(h.title ?? 'untitled runbook')), confidence(h.confidence));
  if (h.answer === 'finding') return cat(trusted('🧭 '), strong(line(h.title ?? 'finding')), confidence(h.confidence));
  if (h.answer === 'checking') return cat(trusted('🔎 '), line(h.title ?? 'checking with the model…'));
  return trusted('No trusted memory for this alert — details in the thread');
}

/** What the alert says: its summary in bold, its description, its value — escaped text. */
function said(card: CardView): Block[] {
  const s = card.said;
  if (!s) return [];
  const out: Block[] = [];
  if (s.summary) out.push(para(strong(line(s.summary))));
  if (s.description) out.push(para(text(s.description)));
  if (s.value) out.push(para(cat(em(trusted('Value: ')), line(s.value))));
  return out;
}

/** "Seen before": the label, one line per past episode (escaped text), and the link to the rest. */
function seenBeforeBlocks(card: CardView): Block[] {
  const h = card.seenBefore;
  if (!h || h.lines.length === 0) return [];
  const out = [para(em(trusted(SEEN_BEFORE_LABEL))), ...h.lines.map((l) => para(cat(trusted('• '), typeof l === 'string' ? line(l) : inline(l, CAP.line))))];
  if (h.more) out.push(para(h.more.url ? link(seenBeforeMore(h.more), h.more.url, CAP.line) : line(`${seenBeforeMore(h.more)} (${h.more.path})`)));
  return out;
}

/**
 * The thread root: header, severity and state, what the alert says, verdict and headline, links, the reaction hint,
 * and the owners to ping (critical firings only; the caller decides, this only renders).
 */
export function renderCard(card: CardView, opts: RenderOptions = {}): MatrixMessageContent {
  const blocks: Block[] = [];
  blocks.push(para(strong(cat(trusted('🔍 '), line(card.alertname), trusted(' — '), line(card.where)))));
  const state = cat(
    trusted(`${SEVERITY[card.severity] ?? SEVERITY.none} · ${STATE[card.state] ?? card.state}`),
    card.stateNote ? cat(trusted(' — '), inline(asRichText(card.stateNote), CAP.line)) : trusted(''),
  );
  blocks.push(para(state));
  blocks.push(...said(card));
  blocks.push(para(cat(trusted(`${VERDICT[card.verdict] ?? card.verdict} · `), headline(card))));
  const links = card.links.slice(0, 12).map((l) => link(l.label, l.url, CAP.line));
  if (links.length > 0) blocks.push(para(cat(trusted('🔗 '), ...links.flatMap((l, i) => (i === 0 ? [l] : [trusted(' · '), l])))));
  blocks.push(...seenBeforeBlocks(card));
  if (card.curation)
    blocks.push(
      para(
        cat(
          trusted('📚 '),
          line(card.curation.text),
          ...(card.curation.link ? [trusted(' '), link(card.curation.link.label, card.curation.link.url, CAP.line)] : []),
        ),
      ),
    );
  if (card.feedback) blocks.push(para(cat(trusted('🗳 '), line(card.feedback))));
  const ack = asRichText(card.ack);
  if (ack.length > 0) blocks.push(para(inline(ack, CAP.line)));
  if (card.onCall) blocks.push(para(inline(onCallText(card.onCall, 'matrix'), CAP.line)));
  if (card.controls) blocks.push(para(em(trusted(card.amSilence ? CONTROLS_HINT + AM_SILENCE_HINT : CONTROLS_HINT))));
  const users = card.mentions.filter(isUserId);
  if (users.length > 0) {
    const pills = users.map((u) => ({ text: u, html: `<a href="${userPermalink(u)}">${htmlLine(u, CAP.line)}</a>` }));
    blocks.push(para(cat(trusted('cc '), ...pills.flatMap((p, i) => (i === 0 ? [p] : [trusted(' '), p])))));
  }
  return content(
    blocks,
    [...users, ...onCallIds(card.onCall).filter(isUserId)],
    opts,
    card.links.map((l) => l.url).find((u) => safeUrl(u)),
  );
}

function entryLink(entry: string, url: string | undefined): Piece {
  return url && safeUrl(url) ? link(entry, url, CAP.line) : code(entry);
}

/**
 * A titled part of an entry: the title and its first paragraph on one line, the rest (the credit
 * line `— from Ann via Matrix on …`, more paragraphs) each its own — not bullets, which made the
 * credit read as a second item of the fix.
 */
function paragraphs(head: Piece, ps: import('../../core/chat/thread-view.js').RichText[] | undefined): Block[] {
  if (!ps || ps.length === 0) return [];
  const [first, ...rest] = ps.slice(0, MAX_ROWS).map((p) => inline(p, CAP.text));
  return [para(cat(head, trusted(' '), first!)), ...rest.map(para)];
}

function step(s: StepView): Piece {
  const t = inline(s.text, CAP.text);
  if (s.code === undefined || s.code.trim() === '') return t;
  // The command that follows a step is the point of the step: it keeps its own block.
  return { text: `${t.text}\n    ${plain(s.code, CAP.code).replace(/\n/g, '\n    ')}`, html: `${t.html}<pre><code>${escapeCode(s.code)}</code></pre>` };
}

function escapeCode(s: string): string {
  // Newlines are the point of a code block: no <br> here.
  return html(s, CAP.code).replace(/<br>/g, '\n');
}

function section(s: DetailSection): Block[] {
  switch (s.kind) {
    case 'instant':
      return [
        para(cat(strong(trusted('⚡ Instant recall')), trusted(' — answered from your knowledge base; no investigation was run'))),
        para(strong(line(s.title))),
        ...paragraphs(strong(trusted('Known cause:')), s.cause),
        ...paragraphs(strong(trusted('Resolution (human-reviewed):')), s.resolution),
        ...paragraphs(strong(trusted('❌ Tried before (did not work):')), s.triedBefore),
        para(cat(trusted('Entry: '), entryLink(s.entry, s.entryUrl), trusted(' · Track record: '), line(s.track))),
      ];
    case 'runbook':
      return [
        para(cat(strong(trusted('📚 Runbook')), trusted(' — '), strong(line(s.title)), trusted(' (a guide, not a diagnosis)'), confidence(s.confidence))),
        ...(s.steps.length > 0 ? [{ kind: 'list', ordered: true, items: s.steps.slice(0, MAX_ROWS).map(step) } satisfies Block] : []),
        para(cat(trusted('Entry: '), entryLink(s.entry, s.entryUrl), trusted(' · '), line(s.track))),
      ];
    case 'near_miss':
      return [
        para(
          cat(
            strong(trusted('🔎 Near miss')),
            trusted(' — '),
            code(s.entry),
            trusted(' was stopped by the '),
            line(s.gate),
            trusted(' gate: '),
            text(s.reason),
          ),
        ),
      ];
    case 'refused':
      return [para(cat(strong(trusted('⛔ Recall refused')), trusted(' — '), code(s.entry), trusted(': '), text(s.reason)))];
    case 'fall_through':
      return [para(cat(strong(trusted('⚠️ Fall-through')), trusted(' — '), text(s.note)))];
    case 'closest':
      return s.entries.length === 0
        ? []
        : [para(cat(trusted('Closest catalog entries: '), ...s.entries.slice(0, 10).flatMap((e, i) => (i === 0 ? [code(e)] : [trusted(', '), code(e)]))))];
    case 'finding': {
      const review = s.verified === undefined ? '' : s.verified ? ' · verified ✓' : ' · verify rejected ✗';
      const status = s.status === 'completed' ? '' : ` · ${s.status}`;
      const out: Block[] = [
        para(cat(strong(trusted('🧭 Finding')), trusted(` — ${VERDICT[s.verdict] ?? s.verdict}`), confidence(s.confidence), trusted(`${review}${status}`))),
        para(text(s.summary)),
      ];
      if (s.statusDetail) out.push(para(em(line(s.statusDetail))));
      if (s.entry) out.push(para(cat(trusted('Answered from your knowledge base: '), code(s.entry))));
      if (s.causes.length > 0) {
        out.push({
          kind: 'list',
          ordered: true,
          head: strong(trusted('Root causes')),
          items: s.causes
            .slice(0, 5)
            .map((c) => cat(text(c.cause), confidence(c.confidence), ...c.evidence.slice(0, 4).map((e) => cat(trusted(' — evidence: '), line(e))))),
        });
      }
      if (s.actions.length > 0)
        out.push({
          kind: 'list',
          ordered: false,
          head: strong(trusted('Suggested next steps (read-only advice)')),
          items: s.actions.slice(0, 8).map((a) => cat(text(a.action), trusted(a.reversible ? ' (reversible)' : ' (NOT reversible)'))),
        });
      if (s.ruledOut.length > 0)
        out.push({
          kind: 'list',
          ordered: false,
          head: strong(trusted('Ruled out')),
          items: s.ruledOut.slice(0, 8).map((r) => cat(text(r.cause), trusted(' — '), text(r.reason))),
        });
      if (s.openQuestions.length > 0)
        out.push({ kind: 'list', ordered: false, head: strong(trusted('Open questions')), items: s.openQuestions.slice(0, 8).map((q) => text(q)) });
      if (s.dataGaps.length > 0)
        out.push({ kind: 'list', ordered: false, head: strong(trusted('Could not check')), items: s.dataGaps.slice(0, 8).map((g) => text(g)) });
      if (s.changeRef) out.push(para(cat(trusted('Change: '), code(s.changeRef))));
      return out;
    }
    case 'degraded':
      return [
        para(
          cat(
            strong(trusted('⚠️ Degraded answer')),
            trusted(' — the model could not conclude ('),
            line(s.reason),
            trusted('); facts and the closest entries only'),
          ),
        ),
        ...(s.facts.length + s.closest.length > 0
          ? [
              {
                kind: 'list',
                ordered: false,
                items: [...s.facts.map((f) => line(f)), ...s.closest.map((c) => cat(code(c.entry), trusted(' — '), line(c.title)))],
              } satisfies Block,
            ]
          : []),
      ];
  }
}

/**
 * The full analysis, sent in the card's thread: sections, runbook steps with their commands,
 * facts, the alert's labels as a compact table, the footer.
 */
export function renderDetail(d: DetailView, opts: RenderOptions = {}): MatrixMessageContent {
  const blocks: Block[] = [];
  if (d.confidence) blocks.push(para(line(d.confidence, CAP.text)));
  for (const s of d.sections) blocks.push(...section(s));
  if (d.facts.length > 0) {
    blocks.push({
      kind: 'list',
      ordered: false,
      items: d.facts.slice(0, MAX_ROWS).map(([k, v]) => cat(strong(line(k, CAP.key)), trusted(': '), line(v, CAP.cell))),
    });
  }
  if (d.labels.length > 0) {
    const width = Math.min(32, Math.max(...d.labels.map(([k]) => Array.from(k).length)));
    const rows = d.labels.slice(0, MAX_ROWS).map(([k, v]) => {
      const key = plainLine(k, CAP.key);
      return {
        text: `${key.padEnd(width)}  ${plainLine(v, CAP.cell)}`,
        html: `<tr><td><code>${htmlLine(k, CAP.key)}</code></td><td>${htmlLine(v, CAP.cell)}</td></tr>`,
      };
    });
    if (d.labels.length > MAX_ROWS)
      rows.push({ text: `… ${d.labels.length - MAX_ROWS} more`, html: `<tr><td colspan="2">… ${d.labels.length - MAX_ROWS} more</td></tr>` });
    blocks.push({ kind: 'table', head: strong(trusted('Labels')), columns: ['label', 'value'], rows });
  }
  const footer = cat(trusted('trigger '), code(d.triggerKey), d.footer ? cat(trusted(' · '), line(d.footer, CAP.text)) : trusted(''));
  blocks.push(para(em(footer)));
  const entryUrl = d.sections.map((s) => ('entryUrl' in s ? s.entryUrl : undefined)).find((u) => u && safeUrl(u));
  return content(blocks, [], opts, entryUrl);
}

/** A short line in the thread: "✅ resolved after 23 min", "📝 saved". */
export function renderNotice(n: NoticeView, opts: RenderOptions = {}): MatrixMessageContent {
  return content([para(cat(line(n.icon, 16), trusted(' '), inline(n.text, CAP.text)))], (n.mentions ?? []).filter(isUserId), opts);
}

export function renderReply(v: ReplyView, opts: RenderOptions = {}): MatrixMessageContent {
  return v.kind === 'detail' ? renderDetail(v, opts) : renderNotice(v, opts);
}

/**
 * A "private" answer. Matrix has no ephemeral messages: this is a notice in the thread (or the
 * room) that everyone in it can read, addressed to `user` with a pill when one is given.
 */
export function renderEphemeral(e: EphemeralView, user?: string, opts: RenderOptions = {}): MatrixMessageContent {
  const blocks: Block[] = [];
  const to = user && isUserId(user) ? user : undefined;
  const address: Piece = to ? { text: `${to}: `, html: `<a href="${userPermalink(to)}">${htmlLine(to, CAP.line)}</a>: ` } : trusted('');
  blocks.push(para(cat(address, strong(line(e.title)))));
  for (const p of e.body.slice(0, MAX_ROWS)) blocks.push(para(inline(p, CAP.text)));
  if (e.trace && e.trace.length > 0) {
    blocks.push({
      kind: 'list',
      ordered: false,
      head: strong(trusted('Gate trace')),
      items: e.trace
        .slice(0, MAX_ROWS)
        .map((t) =>
          cat(
            trusted(t.passed ? '✓ ' : '✗ '),
            line(t.gate, CAP.key),
            t.entry ? cat(trusted(' · '), code(t.entry)) : trusted(''),
            t.value !== null ? cat(trusted(' · '), line(String(t.value), CAP.key)) : trusted(''),
            t.threshold !== null ? cat(trusted(' vs '), line(String(t.threshold), CAP.key)) : trusted(''),
            trusted(' — '),
            line(t.reason, CAP.text),
          ),
        ),
    });
  }
  return content(blocks, to ? [to] : [], opts);
}

/** Puts `c` in the thread of `root`, with the reply fallback for clients without threads. */
export function inThread(c: MatrixMessageContent, root: string): MatrixMessageContent {
  return { ...c, 'm.relates_to': { rel_type: 'm.thread', event_id: root, is_falling_back: true, 'm.in_reply_to': { event_id: root } } };
}

/**
 * An `m.replace` edit of `original` whose new content is `c`: clients that understand edits show
 * `m.new_content` in place of the original; the others show the `* ` fallback. The top-level
 * `m.mentions` is empty: an edit must not ping again (spec: mentions in edits).
 */
export function asEdit(c: MatrixMessageContent, original: string): MatrixMessageContent {
  const { 'm.relates_to': _drop, 'm.new_content': _nested, ...fresh } = c;
  return {
    msgtype: 'm.notice',
    body: `* ${c.body}`,
    format: 'org.matrix.custom.html',
    formatted_body: `* ${c.formatted_body}`,
    'm.mentions': {},
    'm.new_content': fresh,
    'm.relates_to': { rel_type: 'm.replace', event_id: original },
  };
}

/** Bytes the content takes as JSON. */
export function contentBytes(c: unknown): number {
  return Buffer.byteLength(JSON.stringify(c), 'utf8');
}

/**
 * Renders with `render`, wraps with `wrap` (a thread relation, an edit), and shrinks the
 * budget until the wrapped content fits {@link CONTENT_BUDGET_BYTES}: an edit carries its text
 * twice, a relation adds a few hundred bytes.
 */
export function fit(
  render: (opts: RenderOptions) => MatrixMessageContent,
  wrap: (c: MatrixMessageContent) => MatrixMessageContent,
  opts: RenderOptions = {},
): MatrixMessageContent {
  const limit = opts.budget ?? CONTENT_BUDGET_BYTES;
  let budget = limit;
  for (let i = 0; i < 8; i++) {
    const c = wrap(render({ ...opts, budget }));
    const over = contentBytes(c) - limit;
    if (over <= 0) return c;
    budget -= over + 256;
  }
  throw new Error('matrix renderer: content does not fit the event size limit');
}

/** The card as it goes out: fitted to the limit. */
export const cardContent = (card: CardView, opts: RenderOptions = {}): MatrixMessageContent =>
  fit(
    (o) => renderCard(card, o),
    (c) => c,
    opts,
  );
/** The card's edit in place. */
export const cardEditContent = (card: CardView, original: string, opts: RenderOptions = {}): MatrixMessageContent =>
  fit(
    (o) => renderCard(card, o),
    (c) => asEdit(c, original),
    opts,
  );
/** A reply in the thread of `root`. */
export const replyContent = (view: ReplyView, root: string, opts: RenderOptions = {}): MatrixMessageContent =>
  fit(
    (o) => renderReply(view, o),
    (c) => inThread(c, root),
    opts,
  );

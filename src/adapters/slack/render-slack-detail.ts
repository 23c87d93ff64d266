/**
 * What goes inside the thread as Block Kit: the full analysis (knowledge blocks, runbook steps
 * with their commands, near miss, facts, the labels as a compact table), short notices, and
 * private answers. Every string from an alert, the catalog or a user is a literal text run.
 */
import type { types } from '@slack/bolt';
import type { DetailSection, DetailView, EphemeralView, FindingSection, LinkView, NoticeView, RichText } from '../../core/chat/thread-view.js';
import { confidenceDot } from '../../core/chat/thread-view.js';
import { escapeLine } from '../../core/render/escape-text.js';
import type { GateTraceStep } from '../../core/types.js';
import { VERDICT_TEXT } from './render-slack-card.js';
import { inlines, link, plain, preformatted, richTextBlocks, section, text, type RichTextBlockElement, type RichTextElement } from './rich-text.js';
import { clip, SLACK_LIMITS } from './slack-limits.js';
import { fallbackRichText, fallbackText, fitBlocks, type SlackMessage } from './slack-message.js';

/** A label or a value in the labels table: one line, and short enough to keep the table a table. */
const CELL = 200;

function entryRef(entry: string, url: string | undefined): RichTextElement {
  return url ? link(url, entry) : text(entry, { code: true });
}

/** "Cause:" followed by the paragraphs, each its own rich-text section. */
function titled(title: string, paragraphs: RichText[] | undefined): RichTextBlockElement[] {
  if (!paragraphs || paragraphs.length === 0) return [];
  const [first, ...rest] = paragraphs;
  return [section([text(`${title} `, { bold: true }), ...inlines(first ?? [])]), ...rest.map((p) => section(inlines(p)))];
}

/** A bold heading followed by one literal line per item (at most `max`). */
function listed(title: string, items: readonly string[], max = 8): RichTextBlockElement[] {
  if (items.length === 0) return [];
  return [section([text(title, { bold: true })]), ...items.slice(0, max).map((i) => section([text('• '), text(i, undefined, true)]))];
}

function findingElements(s: FindingSection): RichTextBlockElement[] {
  const review = s.verified === undefined ? '' : s.verified ? ' · verified ✓' : ' · verify rejected ✗';
  const status = s.status === 'completed' ? '' : ` · ${s.status}`;
  const out: RichTextBlockElement[] = [
    section([
      text('🧭 Finding', { bold: true }),
      text(` — ${VERDICT_TEXT[s.verdict] ?? s.verdict} · ${confidenceDot(s.confidence)} ${s.confidence.toFixed(2)}${review}${status}`),
    ]),
    section([text(s.summary)]),
  ];
  if (s.statusDetail) out.push(section([text(s.statusDetail, { italic: true }, true)]));
  if (s.entry) out.push(section([text('Answered from your knowledge base: '), text(s.entry, { code: true })]));
  out.push(
    ...listed(
      'Root causes',
      s.causes.slice(0, 5).map(
        (c) =>
          `${c.cause} (${c.confidence.toFixed(2)})${c.evidence
            .slice(0, 4)
            .map((e) => ` — evidence: ${e}`)
            .join('')}`,
      ),
    ),
  );
  out.push(
    ...listed(
      'Suggested next steps (read-only advice)',
      s.actions.map((a) => `${a.action}${a.reversible ? ' (reversible)' : ' (NOT reversible)'}`),
    ),
  );
  out.push(
    ...listed(
      'Ruled out',
      s.ruledOut.map((r) => `${r.cause} — ${r.reason}`),
    ),
  );
  out.push(...listed('Open questions', s.openQuestions));
  out.push(...listed('Could not check', s.dataGaps));
  if (s.changeRef) out.push(section([text('Change: '), text(s.changeRef, { code: true })]));
  return out;
}

function sectionElements(s: DetailSection): RichTextBlockElement[] {
  switch (s.kind) {
    case 'instant':
      return [
        section([text('⚡ Instant recall — ', { bold: true }), text(s.title, { bold: true })]),
        section([text('Answered from your knowledge base; no investigation was run.', { italic: true })]),
        ...titled('Cause:', s.cause),
        ...titled('Resolution:', s.resolution),
        ...titled('❌ Tried before:', s.triedBefore),
        section([text('Entry '), entryRef(s.entry, s.entryUrl), text(` · ${s.track}`)]),
      ];
    case 'runbook': {
      const steps = s.steps.flatMap((step, i): RichTextBlockElement[] => {
        const line = section([text(`${i + 1}. `, { bold: true }), ...inlines(step.text)]);
        return step.code !== undefined && step.code !== '' ? [line, preformatted(step.code)] : [line];
      });
      return [
        section([text('📚 Runbook — ', { bold: true }), text(s.title, { bold: true }), text(` (${confidenceDot(s.confidence)} ${s.confidence.toFixed(2)})`)]),
        ...steps,
        section([text('Entry '), entryRef(s.entry, s.entryUrl), text(` · ${s.track}`)]),
      ];
    }
    case 'near_miss':
      return [section([text('🔎 Near miss — ', { bold: true }), text(s.entry, { code: true }), text(` stopped at the ${s.gate} gate: ${s.reason}`)])];
    case 'refused':
      return [section([text('🚫 Not recalled — ', { bold: true }), text(s.entry, { code: true }), text(`: ${s.reason}`)])];
    case 'fall_through':
      return [section([text('↪ '), text(s.note)])];
    case 'closest':
      return s.entries.length === 0
        ? []
        : [
            section([
              text('Closest entries: ', { bold: true }),
              ...s.entries.flatMap((e, i) => (i === 0 ? [text(e, { code: true })] : [text(', '), text(e, { code: true })])),
            ]),
          ];
    case 'finding':
      return findingElements(s);
    case 'degraded':
      return [
        section([
          text('⚠️ Degraded answer', { bold: true }),
          text(' — the model could not conclude ('),
          text(s.reason, undefined, true),
          text('); facts and the closest entries only'),
        ]),
        ...s.facts.slice(0, 10).map((f) => section([text('• '), text(f, undefined, true)])),
        ...s.closest.slice(0, 10).map((c) => section([text('• '), text(c.entry, { code: true }), text(' — '), text(c.title, undefined, true)])),
      ];
  }
}

/** Label/value pairs as an aligned monospace table (literal text, compact). */
export function labelTable(rows: ReadonlyArray<readonly [string, string]>): string {
  const cells = rows.map(([k, v]) => [clip(escapeLine(k), 40), clip(escapeLine(v), CELL)] as const);
  const width = Math.min(40, Math.max(0, ...cells.map(([k]) => k.length)));
  return cells.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

/** Where the whole analysis can be read when Slack's limits cut it: the first entry link. */
function moreLink(view: DetailView): LinkView | undefined {
  for (const s of view.sections) if ((s.kind === 'instant' || s.kind === 'runbook') && s.entryUrl) return { url: s.entryUrl, label: s.entry };
  return undefined;
}

/** The full analysis, posted as a reply in the card's thread. */
export function renderDetail(view: DetailView): SlackMessage {
  const blocks: types.KnownBlock[] = [];
  if (view.confidence) blocks.push({ type: 'context', elements: [plain(`📈 ${view.confidence}`, SLACK_LIMITS.text)] });
  for (const s of view.sections) blocks.push(...richTextBlocks(sectionElements(s)));
  if (view.facts.length > 0) {
    blocks.push({ type: 'divider' });
    blocks.push(...richTextBlocks(view.facts.map(([k, v]) => section([text(`${k}: `, { bold: true }, true), text(v, undefined, true)]))));
  }
  if (view.labels.length > 0) {
    blocks.push(...richTextBlocks([section([text('Labels', { bold: true })]), preformatted(labelTable(view.labels))]));
  }
  const foot = [plain(`trigger ${view.triggerKey}`, SLACK_LIMITS.text)];
  if (view.footer) foot.push(plain(view.footer, SLACK_LIMITS.text));
  blocks.push({ type: 'context', elements: foot });

  const first = view.sections[0];
  const lead = !first
    ? 'Analysis'
    : first.kind === 'instant' || first.kind === 'runbook'
      ? first.title
      : first.kind === 'fall_through'
        ? first.note
        : 'Analysis';
  return { text: fallbackText(`Analysis: ${lead}`), blocks: fitBlocks(blocks, { more: moreLink(view), keepTail: 1 }) };
}

/** A one-line note in the thread ("✅ resolved after 23 min", "📝 saved"). */
export function renderNotice(view: NoticeView): SlackMessage {
  const blocks = richTextBlocks([section([text(`${view.icon} `), ...inlines(view.text)])]);
  // The ids it pings (the on-call reminder) lead the notification text, as on the card.
  const ping = (view.mentions ?? [])
    .filter((id) => /^[UW][A-Z0-9]{2,30}$/.test(id))
    .map((id) => `<@${id}> `)
    .join('');
  return { text: `${ping}${fallbackText(`${view.icon} `)}${fallbackRichText(view.text)}`, blocks: fitBlocks(blocks) };
}

function traceLine(t: GateTraceStep): string {
  const value = t.value === null ? '' : ` ${String(t.value)}`;
  const threshold = t.threshold === null ? '' : ` (threshold ${String(t.threshold)})`;
  return `${t.passed ? '✓' : '✗'} ${t.gate.padEnd(10)} ${t.entry ?? '—'}${value}${threshold} ${t.reason}`;
}

/** A private answer: a title, paragraphs, and recall's gate trace when there is one. */
export function renderEphemeral(view: EphemeralView): SlackMessage {
  const elements: RichTextBlockElement[] = [section([text(view.title, { bold: true })]), ...view.body.map((p) => section(inlines(p)))];
  if (view.trace && view.trace.length > 0) {
    elements.push(section([text('Gate trace', { bold: true })]), preformatted(view.trace.map((t) => escapeLine(traceLine(t))).join('\n')));
  }
  return { text: fallbackText(view.title), blocks: fitBlocks(richTextBlocks(elements)) };
}

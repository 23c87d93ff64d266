/**
 * The thread root as Block Kit (SPEC §9): a compact card edited in place as the incident's
 * state changes. Header, severity and state, what the alert says (summary, description, value),
 * verdict with confidence and the headline, the alert's links, owner mentions (only from
 * `card.mentions`), and the controls.
 */
import type { types } from '@slack/bolt';
import type { CardView, Headline, RichText } from '../../core/chat/thread-view.js';
import { asRichText, confidenceDot, richText, SEEN_BEFORE_LABEL, seenBeforeMore } from '../../core/chat/thread-view.js';
import type { Verdict } from '../../core/verdict.js';
import type { Severity } from '../../core/types.js';
import { onCallIds, onCallText } from '../../core/oncall/oncall-view.js';
import { inlines, link, mrkdwnText, plain, richTextBlocks, section, slackUserId, text, type RichTextElement, type RichTextSection } from './rich-text.js';
import { ACTION_IDS, AM_SILENCE_CHOICES, controlsBlockId, SILENCE_CHOICES } from './slack-controls.js';
import { SLACK_LIMITS } from './slack-limits.js';
import { fallbackText, fitBlocks, type SlackMessage } from './slack-message.js';

export const SEVERITY_EMOJI: Record<Severity, string> = { critical: '🔴', warning: '🟠', info: '🔵', none: '⚪' };

export const VERDICT_TEXT: Record<Verdict, string> = {
  action_required: '🔥 Action required',
  action_suggested: '🛠 Action suggested',
  inconclusive: '❓ Inconclusive',
  no_action: '✅ No action',
};

const STATE_TEXT: Record<CardView['state'], string> = { firing: '🚨 Firing', resolved: '✅ Resolved', silenced: '🔕 Silenced' };

/** A card stays compact: the first links and owners; the rest belong in the thread. */
const MAX_LINKS = 10;
const MAX_MENTIONS = 20;
const USER_ID = /^[UW][A-Z0-9]{2,30}$/;
type ContextElement = types.ContextBlock['elements'][number];
const GROUP_ID = /^S[A-Z0-9]{2,30}$/;

function headlineText(h: Headline): string {
  const title = h.title ? `: ${h.title}` : '';
  if (h.answer === 'instant') return `⚡ Instant recall${title}`;
  if (h.answer === 'runbook') return `📚 Runbook${title}`;
  if (h.answer === 'finding') return `🧭 ${h.title ?? 'Finding'}`;
  if (h.answer === 'checking') return `🔎 ${h.title ?? 'Checking with the model…'}`;
  return 'No trusted answer in memory';
}

function confidenceText(h: Headline): string {
  return h.confidence === undefined || !Number.isFinite(h.confidence) ? '' : `${confidenceDot(h.confidence)} ${h.confidence.toFixed(2)}`;
}

function stateText(card: CardView): string {
  return card.stateNote ? `${STATE_TEXT[card.state]} — ${richText(asRichText(card.stateNote))}` : STATE_TEXT[card.state];
}

/**
 * The severity and state line as one context element, read as one line: `🟠 warning · 🔕 Silenced —
 * silenced by @ann until 10:06 UTC`, one space around a mention. Text alone is `plain_text`
 * (shown literally). With a Slack person in it, it is one `mrkdwn` element — `&<>` escaped, the
 * person as `<@U…>` — so long as no text in it carries a mrkdwn marker (`*_~` and backticks);
 * such a line keeps each text run its own `plain_text` element beside the mention, so a name
 * or a note can never format it (Slack's mrkdwn has no escapes).
 */
function stateElements(card: CardView): ContextElement[] {
  const oneLine = (t: string): string => t.replace(/\s*[\r\n]+\s*/g, ' ');
  const runs: RichText = [
    `${SEVERITY_EMOJI[card.severity] ?? '⚪'} ${card.severity} · ${STATE_TEXT[card.state]}`,
    ...(card.stateNote ? [' — ', ...asRichText(card.stateNote)] : []),
  ].map((r) => (typeof r === 'string' ? oneLine(r) : r));
  const mentions = (r: RichText[number]): boolean => typeof r === 'object' && 'person' in r && slackUserId(r.person) !== undefined;
  const words = runs.filter((r) => !mentions(r)).map((r) => (typeof r === 'string' ? r : richText([r])));
  if (!runs.some(mentions)) return [plain(words.join('').trim(), SLACK_LIMITS.text)];
  const one = mrkdwnText(runs).trim();
  if (!words.some((w) => /[*_~`]/.test(w)) && one.length <= SLACK_LIMITS.text) return [{ type: 'mrkdwn', text: one, verbatim: true }];
  const out: ContextElement[] = [];
  let pending = '';
  const flush = (): void => {
    if (pending.trim() !== '') out.push(plain(pending.trim(), SLACK_LIMITS.text));
    pending = '';
  };
  for (const r of runs) {
    if (mentions(r)) {
      flush();
      out.push({ type: 'mrkdwn', text: mrkdwnText([r]), verbatim: true });
    } else pending += typeof r === 'string' ? r : richText([r]);
  }
  flush();
  return out;
}

/** Mentions as real mention elements; ids that are not Slack user/group ids are dropped. */
function mentionElements(ids: readonly string[]): RichTextElement[] {
  const out: RichTextElement[] = [];
  for (const id of ids) {
    if (USER_ID.test(id)) out.push({ type: 'user', user_id: id });
    else if (GROUP_ID.test(id)) out.push({ type: 'usergroup', usergroup_id: id });
    else continue;
    out.push(text(' '));
  }
  return out;
}

/** The same mentions in the fallback `text`, so the notification pings too. */
function mentionMarkup(ids: readonly string[]): string {
  return ids
    .map((id) => (USER_ID.test(id) ? `<@${id}>` : GROUP_ID.test(id) ? `<!subteam^${id}>` : ''))
    .filter((m) => m !== '')
    .join(' ');
}

/** The alert's own words: its summary in bold, its description, its value — literal text runs. */
function saidParagraphs(card: CardView): RichTextSection[] {
  const s = card.said;
  if (!s) return [];
  const out: RichTextSection[] = [];
  if (s.summary) out.push(section([text(s.summary, { bold: true }, true)]));
  if (s.description) out.push(section([text(s.description)]));
  if (s.value) out.push(section([text('Value: ', { italic: true }), text(s.value, undefined, true)]));
  return out;
}

function controls(card: CardView): types.ActionsBlock {
  const button = (action_id: string, label: string): types.Button => ({ type: 'button', action_id, text: plain(label, SLACK_LIMITS.buttonText) });
  const select: types.StaticSelect = {
    type: 'static_select',
    action_id: ACTION_IDS.silence,
    placeholder: plain('🔕 Silence…', SLACK_LIMITS.placeholder),
    options: [...SILENCE_CHOICES, ...(card.amSilence ? AM_SILENCE_CHOICES : [])].map((c) => ({
      text: plain(c.label, SLACK_LIMITS.buttonText),
      value: c.value,
    })),
  };
  const block: types.ActionsBlock = {
    type: 'actions',
    elements: [button(ACTION_IDS.vote_up, '👍 Accurate'), button(ACTION_IDS.vote_down, '👎 Off-base'), select, button(ACTION_IDS.ack, '👀 On it')],
  };
  const blockId = controlsBlockId(card.state, card.controlsId);
  return blockId ? { ...block, block_id: blockId } : block;
}

/** "Seen before": the label, one line per past episode (literal text), and the link to the rest. */
function seenBeforeSections(card: CardView): RichTextSection[] {
  const h = card.seenBefore;
  if (!h || h.lines.length === 0) return [];
  const out = [section([text(SEEN_BEFORE_LABEL, { italic: true })]), ...h.lines.map((l) => section([text('• '), ...inlines(asRichText(l))]))];
  if (h.more) out.push(section([h.more.url ? link(h.more.url, seenBeforeMore(h.more)) : text(`${seenBeforeMore(h.more)} (${h.more.path})`, undefined, true)]));
  return out;
}

/** The card: blocks plus the notification text (escaped, with the mentions that should ping). */
export function renderCard(card: CardView): SlackMessage {
  const mentions = card.state === 'firing' ? card.mentions : [];
  const header: types.HeaderBlock = { type: 'header', text: plain(`🔍 ${card.alertname} — ${card.where}`, SLACK_LIMITS.header) };
  const status: types.ContextBlock = {
    type: 'context',
    elements: stateElements(card),
  };

  const confidence = confidenceText(card.headline);
  const summary = [
    text(VERDICT_TEXT[card.verdict] ?? card.verdict, { bold: true }),
    text(confidence ? ` · ${confidence} · ` : ' · '),
    text(headlineText(card.headline)),
  ];
  const paragraphs = [...saidParagraphs(card), section(summary)];
  const links = card.links.slice(0, MAX_LINKS).flatMap((l, i) => (i === 0 ? [link(l.url, l.label)] : [text(' · '), link(l.url, l.label)]));
  if (links.length > 0) paragraphs.push(section(links));
  paragraphs.push(...seenBeforeSections(card));
  const c = card.curation;
  if (c) paragraphs.push(section([text(`📚 ${c.text}`), ...(c.link ? [text(' '), link(c.link.url, c.link.label)] : [])]));
  if (card.feedback) paragraphs.push(section([text(`🗳 ${card.feedback}`, undefined, true)]));
  const ack = asRichText(card.ack);
  if (ack.length > 0) paragraphs.push(section(inlines(ack)));
  if (card.onCall) paragraphs.push(section(inlines(onCallText(card.onCall, 'slack'))));
  const who = mentionElements(mentions.slice(0, MAX_MENTIONS));
  if (who.length > 0) paragraphs.push(section([text('cc '), ...who]));

  const blocks: types.KnownBlock[] = [header, status, ...richTextBlocks(paragraphs)];
  if (card.controls) blocks.push(controls(card));

  const ping = mentionMarkup([...mentions.slice(0, MAX_MENTIONS), ...(card.state === 'firing' ? onCallIds(card.onCall) : [])]);
  const said = card.said?.summary ? ` · ${card.said.summary}` : '';
  const summaryLine = `🔍 ${card.alertname} — ${card.where}${said} · ${stateText(card)} · ${VERDICT_TEXT[card.verdict] ?? card.verdict} · ${headlineText(card.headline)}`;
  const fallback = fallbackText(summaryLine);
  return { text: ping ? `${ping} ${fallback}` : fallback, blocks: fitBlocks(blocks, { keepTail: card.controls ? 1 : 0 }) };
}

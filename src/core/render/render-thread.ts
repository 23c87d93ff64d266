import type { Entry, Incident, NearMiss } from '../types.js';
import type { RecallResult, RecalledAnswer } from '../recall/recall.js';
import { describe } from '../recall/structural.js';
import { escapeControl, escapeLine } from './escape-text.js';

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
  /** Why the loop did not investigate (no model yet, or a budget). */
  fallThroughNote?: string;
  /** Optional link builder for entries (e.g. a web URL into the catalog repo). */
  linkFor?: (entryId: string) => string;
}

const SECTION_LIMIT = 600;

/** Keeps a quoted section readable in chat: collapse blank runs, cut at a limit. */
function excerpt(text: string | undefined, limit = SECTION_LIMIT): string {
  if (!text) return '';
  const t = text.replace(/\r/g, '').replace(/\n{3,}/g, '\n\n').trim();
  return t.length > limit ? `${t.slice(0, limit).trimEnd()}…` : t;
}

/** First few steps of a runbook's diagnosis, one line each. */
export function firstSteps(entry: Entry, max = 3): string[] {
  const body = entry.sections['diagnosis'] ?? entry.sections['investigate'] ?? entry.sections['mitigation'] ?? '';
  const lines = body
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /^([-*]|\d+[.)])\s+/.test(l))
    .map((l) => l.replace(/^([-*]|\d+[.)])\s+/, ''));
  return lines.slice(0, max).map((l) => (l.length > 200 ? `${l.slice(0, 200)}…` : l));
}

export function confidenceDot(c: number): string {
  return c >= 0.8 ? '🟢' : c >= 0.5 ? '🟡' : '⚪';
}

export function ago(fromIso: string, now: Date): string {
  const ms = now.getTime() - Date.parse(fromIso);
  if (!Number.isFinite(ms) || ms < 0) return 'just now';
  const min = Math.round(ms / 60_000);
  if (min < 60) return `${min} min ago`;
  const h = Math.round(min / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.round(h / 24)} d ago`;
}

function trackLine(a: RecalledAnswer): string {
  const t = a.track;
  if (a.kind === 'runbook') return `👍 ${t.up} 👎 ${t.down}`;
  const concluded = t.resolved + (t.failed ?? 0);
  const inFlight = t.inFlight ? ` (${t.inFlight} in progress)` : '';
  return `resolved ${t.resolved} of ${concluded} concluded recalls${inFlight} · 👍 ${t.up} 👎 ${t.down}`;
}

function header(i: Incident): string {
  const where = i.workload ? describe(i.workload) : i.labels['instance'] ?? i.source;
  return `🔍 ${escapeLine(i.alertname)} — ${escapeLine(where)} · severity ${i.severity}`;
}

function instantBlock(a: RecalledAnswer, link: (id: string) => string): string[] {
  const e = a.entry;
  const out = [
    `⚡ *Instant recall* — answered from your knowledge base; no investigation was run`,
    `*${e.title}*`,
  ];
  const cause = excerpt(e.sections['cause']);
  const resolution = excerpt(e.sections['resolution']);
  const tried = excerpt(e.sections['tried and failed'], 400);
  if (cause) out.push(`*Known cause:* ${cause}`);
  if (resolution) out.push(`*Resolution (human-reviewed):* ${resolution}`);
  if (tried) out.push(`❌ *Tried before (did not work):*`, tried);
  out.push(`Entry: ${link(e.id)}`, `Track record: ${trackLine(a)}`);
  return out;
}

function runbookBlock(a: RecalledAnswer, link: (id: string) => string): string[] {
  const out = [`📚 *Runbook* — ${a.entry.title} (a guide, not a diagnosis) · ${confidenceDot(a.confidence)} ${a.confidence.toFixed(2)}`];
  for (const s of firstSteps(a.entry)) out.push(`  • ${s}`);
  out.push(`  ${link(a.entry.id)} · ${trackLine(a)}`);
  return out;
}

function nearMissLine(n: NearMiss): string {
  return `🔎 *Near miss* — ${n.entry} was stopped by the ${n.gate} gate: ${n.reason}`;
}

/**
 * The RCA thread's first message (SPEC §9 anatomy, as far as recall and the ledger can fill it).
 * Plain markdown-ish text: each transport formats it further if it can.
 */
export function renderThread(input: ThreadInput): string {
  const { incident: i, recall: r, recurrence: rec, now } = input;
  const link = input.linkFor ?? ((id: string) => id);
  const lines: string[] = [header(i)];
  if (r.instant) {
    const a = r.instant;
    const t = a.track;
    const factor = t.withheld ? 'no track record yet' : `track record ${t.factor.toFixed(2)}`;
    lines.push(`🛠 action suggested · ${confidenceDot(a.confidence)} recalled at ${a.confidence.toFixed(2)} (${a.tier} match × ${factor}${a.confirmCapped ? '; capped at 0.70: no live-state check ran' : ''})`);
    lines.push('', ...instantBlock(a, link));
  } else {
    lines.push(`❓ inconclusive · no trusted memory for this alert`);
    lines.push('', `⚠️ *Fall-through* — ${input.fallThroughNote ?? 'an investigation is needed; no model is configured, so these are recurrence facts and the closest catalog entries only'}`);
    for (const s of r.trace) {
      if (s.gate === 'outcome' && !s.passed && s.entry) lines.push(`⛔ *Recall refused* — ${s.entry}: ${s.reason}`);
    }
  }
  if (r.runbook) lines.push('', ...runbookBlock(r.runbook, link));
  if (r.nearMiss) lines.push('', nearMissLine(r.nearMiss));
  if (!r.instant && !r.runbook && r.ranked.length > 0) {
    lines.push('', `Closest catalog entries (not trusted): ${r.ranked.slice(0, 3).join(', ')}`);
  }
  const facts = [`alert ${escapeLine(i.alertname)}`];
  if (i.workload) facts.push(`resource ${escapeLine(describe(i.workload))}`);
  facts.push(`started ${i.startsAt}`);
  if (rec.previousCount > 0) {
    let f = `🔁 #${rec.previousCount + 1}`;
    if (rec.lastSeen) f += ` · last ${ago(rec.lastSeen, now)}`;
    if (rec.previousEntry) f += ` · previous: ${link(rec.previousEntry)}`;
    facts.push(f);
  } else {
    facts.push('first time seen');
  }
  lines.push('', `Facts: ${facts.join(' · ')}`);
  lines.push(`Trigger: ${escapeLine(i.triggerKey)}`);
  lines.push('👍 Accurate · 👎 Off-base · 🔕 Silence… (1 h / 4 h / 24 h)');
  // Whatever the blocks quoted (catalog text, near-miss reasons), nothing unsafe leaves here.
  return escapeControl(lines.join('\n'));
}

/** "✅ resolved after N min" reply. */
export function renderResolved(openedAt: string, resolvedAt: string): string {
  const ms = Date.parse(resolvedAt) - Date.parse(openedAt);
  const min = Number.isFinite(ms) ? Math.max(0, Math.round(ms / 60_000)) : 0;
  return `✅ resolved after ${min} min`;
}

/**
 * An investigation's result as thread views: the Finding (or the degraded answer) in the
 * thread with the cost footer, and the card's new headline. Everything the model wrote is
 * text like any alert field: renderers escape it.
 */
import type { InvestigationResult } from '../investigate/investigation-types.js';
import type { Entry } from '../types.js';
import type { CardPatch, DetailSection, DetailView, FindingSection, Headline } from './thread-view.js';

const STATUS_NOTE: Record<string, string> = {
  exhausted: 'a budget ended it early; this is the partial finding',
  failed: 'it failed before concluding',
  skipped: 'it did not run',
  cancelled: 'it was cancelled',
  degraded: 'the model could not answer usably',
};

/** "verified ✓ · 2 model calls · 1,234 in / 210 out tokens · ~$0.004 · gpt-4.1-mini@3f2a91c0e1aa" */
export function findingFooter(r: InvestigationResult): string {
  const parts: string[] = [];
  const verified = r.recall?.verify?.passed ?? r.verify?.passed;
  if (verified !== undefined) parts.push(verified ? 'verified ✓' : 'verified ✗');
  parts.push(`${r.usage.calls} model call${r.usage.calls === 1 ? '' : 's'}`);
  parts.push(`${r.usage.input.toLocaleString('en-US')} in / ${r.usage.output.toLocaleString('en-US')} out tokens`);
  if (r.usage.costUsd > 0)
    parts.push(`~$${r.usage.costUsd < 0.01 ? r.usage.costUsd.toFixed(4) : r.usage.costUsd.toFixed(2)}${r.usage.unpricedCalls > 0 ? '+' : ''}`);
  parts.push(`${r.version.model}@${r.version.promptHash}`);
  return parts.join(' · ');
}

/** The sections a result shows in the thread. */
function sections(r: InvestigationResult, recalled: Entry | undefined): DetailSection[] {
  const f = r.finding;
  if (r.degraded) {
    const facts: string[] = [];
    const rec = r.degraded.recurrence;
    if (rec)
      facts.push(
        `seen ${rec.count} time${rec.count === 1 ? '' : 's'}${rec.lastSeen ? `, last ${rec.lastSeen}` : ''}${rec.previousEntry ? `, previous answer ${rec.previousEntry}` : ''}`,
      );
    return [{ kind: 'degraded', reason: r.detail, facts, closest: r.degraded.closest.map((c) => ({ entry: c.id, title: c.title })) }];
  }
  if (!f) return [];
  const section: FindingSection = {
    kind: 'finding',
    status: r.status,
    summary: f.summary,
    verdict: f.verdict,
    confidence: r.recall?.delivered ? r.recall.confidence : f.confidence,
    causes: f.rootCauses.map((c) => ({ cause: c.cause, confidence: c.confidence, evidence: c.evidence })),
    actions: f.suggestedActions.map((a) => ({ action: a.action, reversible: a.reversible })),
    ruledOut: f.ruledOut,
    openQuestions: f.openQuestions,
    dataGaps: f.dataGaps,
  };
  if (r.status !== 'completed') section.statusDetail = STATUS_NOTE[r.status] ?? r.detail;
  if (f.changeRef) section.changeRef = f.changeRef;
  const verified = r.recall?.verify?.passed ?? f.verified;
  if (verified !== undefined) section.verified = verified;
  if (r.recall?.delivered && recalled) section.entry = recalled.id;
  return [section];
}

/** The Finding (or degraded answer) as the thread's next reply, with the footer. */
export function findingDetail(r: InvestigationResult, triggerKey: string, recalled?: Entry): DetailView {
  return { kind: 'detail', sections: sections(r, recalled), facts: [], labels: [], triggerKey, footer: findingFooter(r) };
}

/** The card's new headline and verdict once a result is in. */
export function findingCardPatch(r: InvestigationResult, recalled?: Entry): CardPatch {
  if (r.recall?.delivered && recalled) {
    const headline: Headline = { answer: 'instant', entry: recalled.id, title: recalled.title, confidence: r.recall.confidence };
    return { kind: 'card_patch', headline, verdict: r.finding?.verdict ?? 'action_suggested' };
  }
  if (r.finding)
    return { kind: 'card_patch', headline: { answer: 'finding', title: r.finding.summary, confidence: r.finding.confidence }, verdict: r.finding.verdict };
  if (r.degraded) return { kind: 'card_patch', headline: { answer: 'none' }, verdict: 'inconclusive' };
  return { kind: 'card_patch', headline: { answer: 'none' }, verdict: 'inconclusive', stateNote: `investigation ${r.status}: ${r.detail}` };
}

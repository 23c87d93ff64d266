/**
 * Plain-text rendering of an investigation for the CLI: the Finding, then the Steps summary
 * and the cost footer (model calls, tokens in/out, estimated cost, investigator version).
 */
import type { InvestigationResult } from '../core/investigate/investigator.js';
import type { Step } from '../core/investigate/step.js';

const pct = (n: number): string => n.toFixed(2);

export function formatStep(s: Step): string {
  switch (s.kind) {
    case 'model':
      return `#${s.seq} model ${s.purpose} ${s.model}: ${s.outcome}${s.toolCalls.length ? ` → ${s.toolCalls.join(', ')}` : ''} (${s.inputTokens} in / ${s.outputTokens} out, ${s.durationMs} ms)${s.error ? ` — ${s.error}` : ''}`;
    case 'tool':
      return `#${s.seq} tool ${s.tool}: ${s.outcome}${s.truncated ? ' (truncated)' : ''}${s.reason ? ` — ${s.reason}` : ''} (${s.bytes} bytes, ${s.durationMs} ms)`;
    case 'note':
      return `#${s.seq} ${s.event}: ${s.reason}`;
  }
}

export function costLine(r: InvestigationResult): string {
  const u = r.usage;
  const cost =
    u.calls === 0
      ? ''
      : u.unpricedCalls === u.calls
        ? ' · cost unknown (no price for the model)'
        : ` · ~$${u.costUsd.toFixed(4)}${u.unpricedCalls ? ` (+${u.unpricedCalls} unpriced calls)` : ''}`;
  return `${u.calls} model calls · ${u.input} tokens in / ${u.output} out${cost} · investigator ${r.version.model} prompt ${r.version.promptHash} tools [${r.version.allowlist.join(', ')}]`;
}

export function formatInvestigation(r: InvestigationResult): string {
  const out: string[] = [];
  out.push(`status: ${r.status}${r.reason ? ` (${r.reason})` : ''} — ${r.detail}`);
  if (r.recall)
    out.push(
      `recall: ${r.recall.entry} ${r.recall.delivered ? `delivered at ${pct(r.recall.confidence)}` : `withdrawn (verify ${r.recall.verify?.verdict ?? 'not run'})`}${r.recall.confirmed ? ', confirmed against live state' : ', not confirmed'}`,
    );
  const f = r.finding;
  if (f) {
    out.push(
      '',
      `${f.partial ? '[partial] ' : ''}${f.summary}`,
      `verdict: ${f.verdict} · confidence ${pct(f.confidence)}${f.verified === undefined ? '' : f.verified ? ' · verified ✓' : ' · verified ✗'}`,
    );
    f.rootCauses.forEach((c, i) => {
      out.push(`${i + 1}. ${c.cause} (${pct(c.confidence)})`);
      for (const e of c.evidence) out.push(`   - ${e}`);
    });
    if (f.suggestedActions.length)
      out.push('next steps:', ...f.suggestedActions.map((a) => `   - ${a.action} (${a.reversible ? 'reversible' : 'not reversible'})`));
    if (f.ruledOut.length) out.push('ruled out:', ...f.ruledOut.map((x) => `   - ${x.cause}: ${x.reason}`));
    if (f.openQuestions.length) out.push('open questions:', ...f.openQuestions.map((q) => `   - ${q}`));
    if (f.dataGaps.length) out.push('data gaps:', ...f.dataGaps.map((g) => `   - ${g}`));
    if (f.changeRef) out.push(`change: ${f.changeRef}`);
  }
  if (r.degraded) {
    out.push('', `DEGRADED — no model conclusion (${r.degraded.reason})`);
    if (r.degraded.recurrence)
      out.push(
        `recurrence: fired ${r.degraded.recurrence.count} times${r.degraded.recurrence.lastSeen ? `, last ${r.degraded.recurrence.lastSeen}` : ''}${r.degraded.recurrence.previousEntry ? `, previous answer ${r.degraded.recurrence.previousEntry}` : ''}`,
      );
    out.push('closest catalog entries:', ...r.degraded.closest.map((c) => `   - ${c.id} — ${c.title}`));
  }
  out.push('', `steps (${r.steps.length}):`, ...r.steps.map((s) => `  ${formatStep(s)}`), '', costLine(r));
  return `${out.join('\n')}\n`;
}

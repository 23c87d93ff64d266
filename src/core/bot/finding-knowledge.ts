/**
 * What a recorded Finding means for the knowledge: whether it confirms an entry a 👎 refused,
 * and its file-time curation decision (recorded in the finding's own transaction).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../ports/logger.js';
import { curationLine } from '../curate/curation-line.js';
import { planCuration } from '../curate/plan-curation.js';
import type { InvestigationResult } from '../investigate/investigation-types.js';
import type { Entry, Incident } from '../types.js';
import { previousEntry, type BotReads, type BotTx } from './bot-context.js';
import { dupFingerprint } from './dup-fingerprint.js';

/**
 * 👎 recovery (SPEC §8): a fresh investigation, forced because a standing 👎 made the track
 * record refuse the entry the model matched, that independently reaches the same finding —
 * completed, verified, conclusive, with the entry's own dedup fingerprint — is a confirmation
 * of that entry. Two of them offset one 👎.
 */
export function confirmation(refused: Entry, incident: Incident, r: InvestigationResult): { entry: string; dupFingerprint: string } | undefined {
  const f = r.finding;
  if (r.status !== 'completed' || !f || f.partial || f.verdict === 'inconclusive') return undefined;
  if (!(f.verified === true || r.verify?.passed === true)) return undefined;
  const dup = dupFingerprint(incident);
  return refused.fingerprint === dup ? { entry: refused.id, dupFingerprint: dup } : undefined;
}

/**
 * File-time curation of the Finding, in the finding's transaction: a recalled or below-bar
 * finding is decided here (and shown on the card); anything else is recorded as a curate
 * intent the curation worker performs against the catalog and the forge. Undefined without
 * curation configured or without a finding.
 */
export function curateFinding(
  d: { read: Pick<BotReads, 'occurrences'>; log: Logger; curation?: { minConfidence: number } },
  tx: BotTx,
  openId: string,
  incident: Incident,
  r: InvestigationResult,
  recalled: Entry | undefined,
  at: string,
): { line?: ReturnType<typeof curationLine>; intent?: boolean } | undefined {
  const c = d.curation;
  if (!c || !r.finding) return undefined;
  const o = d.read.occurrences(incident.triggerKey);
  const previous = previousEntry(o);
  const recurrence =
    o.count > 1
      ? `🔁 #${o.count}${o.lastSeen ? ` · last ${o.lastSeen.slice(0, 16).replace('T', ' ')} UTC` : ''}${previous ? ` · previous: ${previous}` : ''}`
      : undefined;
  const plan = planCuration({
    incident,
    finding: r.finding,
    ...(recalled ? { recalledEntry: recalled.id } : {}),
    ...(recurrence ? { recurrence } : {}),
    minConfidence: c.minConfidence,
  });
  const base = { openId, triggerKey: incident.triggerKey, at };
  if (plan.kind === 'decided') {
    tx.record({ type: 'curated', subject: 'finding', ...base, decision: plan.decision, detail: plan.detail });
    d.log.info({ trigger: incident.triggerKey, decision: plan.decision, detail: plan.detail }, `curation: ${plan.decision}`);
    return { line: curationLine({ decision: plan.decision, detail: plan.detail }) };
  }
  tx.record({ type: 'curate', id: randomUUID(), subject: 'finding', ...base, dupFingerprint: plan.dupFingerprint, draft: plan.draft });
  return { intent: true };
}

/**
 * File-time curation, the part decided with the Finding (SPEC §10): a recalled finding is not
 * novel, one below the quality bar leaves no artifact; everything else becomes draft material
 * for the curation worker, which dedups it against the catalog and the forge.
 */
import type { Finding } from '../investigate/finding.js';
import type { DraftMaterial } from '../ledger-events.js';
import type { Incident } from '../types.js';
import { dupFingerprint } from '../bot/dup-fingerprint.js';
import { HOST_KINDS } from '../identity.js';
import { qualityBar } from './quality-bar.js';

export type CurationPlan =
  | { kind: 'decided'; decision: 'recalled' | 'below_bar'; detail: string; dupFingerprint: string }
  | { kind: 'draft'; dupFingerprint: string; draft: DraftMaterial };

export interface PlanInput {
  incident: Incident;
  finding: Finding;
  /** The entry a verified recall answered from. */
  recalledEntry?: string;
  /** "🔁 #4 · last 2 d ago", when the trigger fired before. */
  recurrence?: string;
  minConfidence: number;
}

/** `namespace/name` (or `host/node1`) as a catalog entry's `resource` names it. */
export function catalogResource(incident: Incident): string | undefined {
  const w = incident.workload;
  if (!w) return undefined;
  if (w.kind !== undefined && HOST_KINDS.has(w.kind)) return `host/${w.name}`;
  if (w.account && !w.namespace) return w.name || undefined;
  return w.namespace && w.name ? `${w.namespace}/${w.name}` : w.namespace || undefined;
}

export function planCuration(input: PlanInput): CurationPlan {
  const { incident, finding: f } = input;
  const dup = dupFingerprint(incident);
  if (input.recalledEntry !== undefined) return { kind: 'decided', decision: 'recalled', detail: `answered from ${input.recalledEntry}`, dupFingerprint: dup };
  const miss = qualityBar(f, input.minConfidence);
  if (miss) return { kind: 'decided', decision: 'below_bar', detail: `${miss.criterion}: ${miss.detail}`, dupFingerprint: dup };
  const w = incident.workload;
  const where = w ? [w.cluster, w.namespace, w.name].filter(Boolean).join('/') : incident.source;
  const resource = catalogResource(incident);
  const draft: DraftMaterial = {
    title: incident.title || incident.alertname,
    alertname: incident.alertname,
    ...(resource ? { resource } : {}),
    where,
    symptom: [...new Set([incident.title, incident.message].map((s) => (s ?? '').trim()).filter((s) => s !== ''))].join('\n\n').slice(0, 2000),
    summary: f.summary,
    verdict: f.verdict,
    confidence: f.confidence,
    causes: f.rootCauses.slice(0, 3).map((c) => ({ cause: c.cause, confidence: c.confidence, evidence: c.evidence.slice(0, 6) })),
    actions: f.suggestedActions.slice(0, 6).map((a) => ({ action: a.action, reversible: a.reversible })),
    ruledOut: f.ruledOut.slice(0, 4).map((r) => ({ cause: r.cause, reason: r.reason })),
    ...(f.changeRef ? { changeRef: f.changeRef } : {}),
    investigator: `${f.investigator.model} · ${f.investigator.promptHash}`,
    ...(input.recurrence ? { recurrence: input.recurrence } : {}),
  };
  return { kind: 'draft', dupFingerprint: dup, draft };
}

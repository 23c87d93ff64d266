/**
 * Confirm (SPEC §6): before an instant recall is trusted, 1–2 read-only tool calls (named in
 * config) read the live state of the incident's namespace — namespace-wide on purpose, so a
 * cause on a neighbouring resource still shows. Their output is what verify reviews.
 */
import type { GateTraceStep, Incident } from '../types.js';
import type { ReviewEvidence } from './prompts.js';
import { capBytes } from './redact.js';
import type { StepRecorder } from './step.js';
import type { Toolbox } from './toolbox.js';

export interface ConfirmOutcome {
  /** At least one tool answered. */
  ran: boolean;
  evidence: ReviewEvidence[];
  reason: string;
}

/** Arguments the incident can fill: namespace and cluster, and the workload for tools that require it. */
function argsFor(schema: Record<string, unknown> | undefined, incident: Incident): Record<string, unknown> | string {
  const props = (schema?.['properties'] ?? {}) as Record<string, unknown>;
  const required = Array.isArray(schema?.['required']) ? (schema['required'] as string[]) : [];
  const w = incident.workload;
  const known: Record<string, string | undefined> = {
    namespace: w?.namespace ?? incident.labels['namespace'],
    cluster: w?.cluster ?? incident.labels['cluster'],
    name: w?.name,
    workload: w?.name,
    kind: w?.kind,
  };
  if (!known.namespace) return 'the incident names no namespace';
  const args: Record<string, unknown> = {};
  for (const key of ['namespace', 'cluster']) if (key in props && known[key]) args[key] = known[key];
  for (const key of required) {
    if (key in args) continue;
    if (known[key] === undefined) return `it requires "${key}", which the incident does not give`;
    args[key] = known[key];
  }
  return args;
}

export async function confirm(
  incident: Incident,
  toolbox: Toolbox,
  names: readonly string[],
  capTotalBytes: number,
  signal: AbortSignal,
  rec: StepRecorder,
): Promise<ConfirmOutcome> {
  if (names.length === 0) return { ran: false, evidence: [], reason: 'no confirm tools configured' };
  const evidence: ReviewEvidence[] = [];
  const why: string[] = [];
  const share = Math.floor(capTotalBytes / names.length);
  for (const name of names) {
    if (!toolbox.has(name)) {
      why.push(`${name} is not usable`);
      // Still recorded: the refusal says why (not allowlisted, write server, missing).
      await toolbox.call(name, {}, incident, signal, rec);
      continue;
    }
    const args = argsFor(toolbox.schemaOf(name), incident);
    if (typeof args === 'string') {
      why.push(`${name} cannot run: ${args}`);
      continue;
    }
    const out = await toolbox.call(name, args, incident, signal, rec);
    if (out.outcome === 'ok') evidence.push({ tool: name, text: capBytes(out.output, share).text });
    else why.push(`${name}: ${out.outcome}`);
  }
  const ran = evidence.length > 0;
  return { ran, evidence, reason: ran ? `live state read with ${evidence.map((e) => e.tool).join(', ')}` : `live state could not be read (${why.join('; ')})` };
}

/** The confirm gate-trace step, with the cap applied when confirm could not run. */
export function confirmTrace(entry: string, outcome: ConfirmOutcome, confidence: number, cap: number): { step: GateTraceStep; confidence: number } {
  if (outcome.ran) return { step: { gate: 'confirm', entry, passed: true, value: confidence, threshold: null, reason: outcome.reason }, confidence };
  const capped = Math.min(confidence, cap);
  return {
    step: { gate: 'confirm', entry, passed: true, value: capped, threshold: cap, reason: `${outcome.reason}; confidence capped at ${cap.toFixed(2)}` },
    confidence: capped,
  };
}

/**
 * The Finding (SPEC §2, §7): what an investigation or a recall concluded, validated by one
 * schema. The model writes {@link ModelFinding}; the engine adds the investigator version.
 */
import { z } from 'zod';
import type { Verdict } from '../verdict.js';

export const VERDICTS = ['action_required', 'action_suggested', 'inconclusive', 'no_action'] as const satisfies readonly Verdict[];

const text = (max: number) => z.string().trim().min(1).max(max);
const confidence = z.number().min(0).max(1);

export const rootCauseSchema = z.strictObject({
  cause: text(600),
  confidence,
  /** What was observed that supports it (tool output, quoted briefly). */
  evidence: z.array(text(600)).max(12).default([]),
  /** Named things it blames: workloads, config keys, versions, nodes. */
  entities: z.array(text(200)).max(12).default([]),
});

export const suggestedActionSchema = z.strictObject({
  action: text(600),
  reversible: z.boolean(),
});

/** The JSON the model must answer with (camelCase keys, exactly these). */
export const modelFindingSchema = z.strictObject({
  summary: text(600),
  verdict: z.enum(VERDICTS),
  confidence,
  rootCauses: z.array(rootCauseSchema).max(5),
  suggestedActions: z.array(suggestedActionSchema).max(8).default([]),
  ruledOut: z
    .array(z.strictObject({ cause: text(600), reason: text(600) }))
    .max(8)
    .default([]),
  openQuestions: z.array(text(600)).max(8).default([]),
  dataGaps: z.array(text(600)).max(8).default([]),
  changeRef: text(300).optional(),
});
export type ModelFinding = z.output<typeof modelFindingSchema>;

/** Which configuration produced a Finding; changing any part makes a new version. */
export interface InvestigatorVersion {
  model: string;
  /** sha256 (12 hex) of the system prompts and the answer schema. */
  promptHash: string;
  allowlist: readonly string[];
}

export interface Finding extends ModelFinding {
  investigator: InvestigatorVersion;
  /** True when a budget ended the run before the model concluded. */
  partial: boolean;
  /** Set by the verify pass: true when the adversarial review kept the cause. */
  verified?: boolean;
}

/** Text the prompt shows the model as the answer shape (kept beside the schema it mirrors). */
export const FINDING_SHAPE = `{
  "summary": "one sentence",
  "verdict": "action_required" | "action_suggested" | "inconclusive" | "no_action",
  "confidence": 0.0-1.0,
  "rootCauses": [ { "cause": "…", "confidence": 0.0-1.0, "evidence": ["what you observed"], "entities": ["workload, config key, version, node you blame"] } ],
  "suggestedActions": [ { "action": "…", "reversible": true | false } ],
  "ruledOut": [ { "cause": "…", "reason": "…" } ],
  "openQuestions": ["…"],
  "dataGaps": ["what you could not check"],
  "changeRef": "optional: the change that caused it (commit, PR, rollout)"
}`;

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * The first JSON object in a model's text: bare, or inside a ```json fence, or with prose
 * around it. Returns undefined when none parses.
 */
export function extractJson(textIn: string | null): unknown {
  if (!textIn) return undefined;
  const t = textIn.trim();
  const fenced = /```(?:json)?\s*\n([\s\S]*?)\n\s*```/.exec(t);
  for (const candidate of [t, fenced?.[1], sliceObject(t)]) {
    if (candidate === undefined) continue;
    try {
      return JSON.parse(candidate);
    } catch {
      // try the next shape
    }
  }
  return undefined;
}

function sliceObject(t: string): string | undefined {
  const a = t.indexOf('{');
  const b = t.lastIndexOf('}');
  return a >= 0 && b > a ? t.slice(a, b + 1) : undefined;
}

/** Parses and validates a model's final answer; the error says what to fix (for the repair prompt). */
export function parseModelFinding(content: string | null): ParseResult<ModelFinding> {
  const json = extractJson(content);
  if (json === undefined) return { ok: false, error: 'the answer is not a JSON object' };
  const r = modelFindingSchema.safeParse(json);
  if (!r.success) {
    const issues = r.error.issues.slice(0, 6).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    return { ok: false, error: issues.join('; ') };
  }
  // Ranked: strongest cause first, whatever order the model wrote.
  const value = { ...r.data, rootCauses: [...r.data.rootCauses].sort((a, b) => b.confidence - a.confidence) };
  return { ok: true, value };
}

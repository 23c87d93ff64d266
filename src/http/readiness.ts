/** What `/readyz` reports. */
export interface Readiness {
  ready: boolean;
  /** Why not, one line each (empty when ready). */
  reasons: string[];
  /** Every check's detail, ready or not: operators read this when something looks off. */
  checks: Record<string, Record<string, unknown>>;
}

/** One readiness check: a name, whether it passes, why not, and detail. */
export interface ReadinessCheck {
  name: string;
  ok: boolean;
  reason?: string;
  detail: Record<string, unknown>;
}

/** Ready only when every check passes. */
export function combineReadiness(checks: readonly ReadinessCheck[]): Readiness {
  const reasons = checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.reason ?? 'not ready'}`);
  return {
    ready: reasons.length === 0,
    reasons,
    checks: Object.fromEntries(checks.map((c) => [c.name, { ok: c.ok, ...(c.reason ? { reason: c.reason } : {}), ...c.detail }])),
  };
}

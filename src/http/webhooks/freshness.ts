/** The age check of replay protection, shared by the signed sources. */

/**
 * Why a signed delivery stamped `stamp` (RFC 3339, or Unix seconds) is refused at `nowMs`: it
 * is missing, unreadable, or further than `windowMs` from now either way (a clock ahead of ours
 * by more than the window is as suspect as an old capture). Undefined when it is fresh.
 */
export function staleReason(field: string, stamp: string | undefined, nowMs: number, windowMs: number, setting: string): string | undefined {
  if (stamp === undefined || stamp.trim() === '') return `${field} is required (replay protection)`;
  const t = /^\d{1,12}$/.test(stamp.trim()) ? Number(stamp.trim()) * 1000 : Date.parse(stamp);
  if (!Number.isFinite(t)) return `${field} ${JSON.stringify(stamp.slice(0, 40))} is not a time`;
  const skew = nowMs - t;
  if (Math.abs(skew) <= windowMs) return undefined;
  const s = Math.round(Math.abs(skew) / 1000);
  return skew > 0
    ? `${field} is ${s} s old, older than ${setting} (${Math.round(windowMs / 1000)} s): a replay or a very late redelivery`
    : `${field} is ${s} s in the future, beyond ${setting} (${Math.round(windowMs / 1000)} s): check the sender's clock`;
}

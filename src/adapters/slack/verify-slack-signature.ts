/**
 * Slack's request signing (v0): `X-Slack-Signature: v0=hex(HMAC-SHA256(secret,
 * "v0:<timestamp>:<raw body>"))` with `X-Slack-Request-Timestamp` within five minutes of now,
 * either way. The headers are checked before the body is read, the signature on the raw bytes
 * before anything is parsed.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack's replay window. */
export const SIGNATURE_WINDOW_MS = 5 * 60_000;

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/** The signature Slack would send for `body` (its raw bytes) at `timestampSec`. */
export function slackSignature(secret: string, timestampSec: number | string, body: string | Uint8Array): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestampSec}:`).update(body).digest('hex')}`;
}

/**
 * What can be checked before the body is read: both headers present, the timestamp inside the
 * window, a `v0=` signature of the right shape. A request failing this never takes a slot of the
 * verify pool (nor its memory).
 */
export function checkSlackHeaders(opts: { timestamp: string | undefined; signature: string | undefined; nowMs: number }): SignatureCheck {
  const { timestamp, signature } = opts;
  if (!timestamp || !signature) return { ok: false, reason: 'missing X-Slack-Request-Timestamp or X-Slack-Signature' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'X-Slack-Request-Timestamp is not a number' };
  const skew = Math.abs(opts.nowMs - Number(timestamp) * 1000);
  if (skew > SIGNATURE_WINDOW_MS) return { ok: false, reason: `stale request: timestamp ${Math.round(skew / 1000)} s away from now (window 300 s)` };
  if (!signature.startsWith('v0=')) return { ok: false, reason: 'unknown signature version' };
  if (!/^v0=[0-9a-f]{64}$/.test(signature)) return { ok: false, reason: 'signature mismatch' };
  return { ok: true };
}

export function verifySlackSignature(opts: {
  secret: string;
  body: string | Uint8Array;
  timestamp: string | undefined;
  signature: string | undefined;
  nowMs: number;
}): SignatureCheck {
  const headers = checkSlackHeaders(opts);
  if (!headers.ok) return headers;
  const { timestamp, signature } = opts as { timestamp: string; signature: string };
  const expected = Buffer.from(slackSignature(opts.secret, timestamp, opts.body));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'signature mismatch' };
  return { ok: true };
}

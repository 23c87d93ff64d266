/**
 * Slack's request signing (v0): `X-Slack-Signature: v0=hex(HMAC-SHA256(secret,
 * "v0:<timestamp>:<raw body>"))` with `X-Slack-Request-Timestamp` within five minutes of now,
 * either way. Checked on the raw bytes before anything is parsed.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack's replay window. */
export const SIGNATURE_WINDOW_MS = 5 * 60_000;

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/** The signature Slack would send for `body` at `timestampSec`. */
export function slackSignature(secret: string, timestampSec: number | string, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestampSec}:${body}`).digest('hex')}`;
}

export function verifySlackSignature(opts: {
  secret: string;
  body: string;
  timestamp: string | undefined;
  signature: string | undefined;
  nowMs: number;
}): SignatureCheck {
  const { timestamp, signature } = opts;
  if (!timestamp || !signature) return { ok: false, reason: 'missing X-Slack-Request-Timestamp or X-Slack-Signature' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'X-Slack-Request-Timestamp is not a number' };
  const skew = Math.abs(opts.nowMs - Number(timestamp) * 1000);
  if (skew > SIGNATURE_WINDOW_MS) return { ok: false, reason: `stale request: timestamp ${Math.round(skew / 1000)} s away from now (window 300 s)` };
  if (!signature.startsWith('v0=')) return { ok: false, reason: 'unknown signature version' };
  const expected = Buffer.from(slackSignature(opts.secret, timestamp, opts.body));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'signature mismatch' };
  return { ok: true };
}

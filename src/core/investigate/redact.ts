/**
 * Steps keep tool output and model text; secrets that leak into either are masked before a
 * Step is recorded, and every Step is bounded.
 */

const PATTERNS: readonly RegExp[] = [
  /\b(?:sk|rk|pk)-[A-Za-z0-9_-]{16,}\b/g, // API keys of the sk-… family
  /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g, // Slack tokens
  /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, // AWS access key ids
  /\bgh[pousr]_[A-Za-z0-9]{20,}\b/g, // GitHub tokens
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b/g, // JWTs
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
];
/** `password=…`, `"token": "…"`, `Authorization: Bearer …` — the value is masked, the key kept. */
const KEYED = /((?:password|passwd|secret|token|api[_-]?key|authorization|credential)s?["']?\s*[:=]\s*["']?)(?:bearer\s+)?[^\s"',;]{4,}/gi;

export const REDACTED = '[redacted]';

/** Masks known secret values and secret-shaped strings. */
export function redactSecrets(text: string, known: readonly string[] = []): string {
  let out = text;
  for (const k of known) if (k.length >= 6) out = out.split(k).join(REDACTED);
  for (const p of PATTERNS) out = out.replace(p, REDACTED);
  return out.replace(KEYED, `$1${REDACTED}`);
}

/** Cuts text to `maxBytes` of UTF-8 without splitting a character; says how much was cut. */
export function capBytes(text: string, maxBytes: number): { text: string; truncated: boolean; bytes: number } {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return { text, truncated: false, bytes: buf.length };
  let end = maxBytes;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--; // back off a continuation byte
  return { text: buf.subarray(0, end).toString('utf8'), truncated: true, bytes: buf.length };
}

/** Redacted and bounded, with a marker when cut: what a Step keeps. */
export function forStep(text: string, maxBytes: number, known: readonly string[] = []): string {
  const capped = capBytes(redactSecrets(text, known), maxBytes);
  return capped.truncated ? `${capped.text}\n… [${capped.bytes - Buffer.byteLength(capped.text)} more bytes not kept]` : capped.text;
}

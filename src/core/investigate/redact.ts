/**
 * Steps keep tool output and model text; secrets that leak into either are masked before a
 * Step is recorded, and every Step is bounded.
 */
import { createRedactor } from '../redact.js';

/** Masks known secret values and secret-shaped strings (the one redactor, src/core/redact.ts). */
export function redactSecrets(text: string, known: readonly string[] = []): string {
  return createRedactor(known).text(text);
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

/**
 * Tokens that protect (SPEC §11, issue 20 item 7): a bearer, UI or MCP token an attacker can
 * guess protects nothing. Refused at start, with the fix: shorter than 16 characters, one of the
 * examples our own docs and manifests show (`change-me`…), an unfilled `<placeholder>`, or so
 * repetitive it is no secret (`aaaaaaaaaaaaaaaa`).
 */

/** Shortest token accepted. */
export const MIN_TOKEN_CHARS = 16;

/** How to make a good one (24 random bytes, 48 hex characters). */
export const TOKEN_FIX = 'generate one with `openssl rand -hex 24`';

/**
 * Values that appear as examples in the docs, the manifests and the README, or that people type
 * when asked for a token; compared case-insensitively, ignoring separators. Keep in step with
 * what the docs show (docs-tokens test).
 */
export const EXAMPLE_TOKENS: readonly string[] = [
  'change-me',
  'changeme-please',
  'change-this-token',
  'replace-me-with-a-secret',
  'your-secret-token',
  'your-bearer-token',
  'my-secret-token',
  'super-secret-token',
  'openssl-rand-hex-24',
  'openssl-rand-hex-32',
];

const squash = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');
const EXAMPLES = new Set(EXAMPLE_TOKENS.map(squash));
/** Words that mark a value as a stand-in, wherever they appear in it. */
const STAND_IN = /change-?me|replace-?me|your-?(token|secret)|example|placeholder/i;

/**
 * Why `value` is not a token worth having (the rule an operator sees), or undefined when it is.
 * Never quotes the value: it is a secret even when it is a bad one.
 */
export function weakTokenReason(value: string): string | undefined {
  const v = value.trim();
  if (v.length < MIN_TOKEN_CHARS) return `must be at least ${MIN_TOKEN_CHARS} characters (it has ${v.length}); ${TOKEN_FIX}`;
  if (/^<.*>$/s.test(v) || /^\$\(.*\)$/s.test(v)) return `is a placeholder from the docs, not a token; ${TOKEN_FIX} and set its output`;
  if (EXAMPLES.has(squash(v)) || STAND_IN.test(v)) return `is an example value from the docs, not a secret; ${TOKEN_FIX}`;
  if (new Set(v).size < 6) return `is too repetitive to be a secret (${new Set(v).size} distinct characters); ${TOKEN_FIX}`;
  return undefined;
}

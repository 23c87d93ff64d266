/**
 * Slack's published Block Kit limits, and the one way we meet them: cut with "…", never fail.
 * These are Slack's numbers, not tunables: a post that breaks one is rejected with
 * `invalid_blocks` or `msg_blocks_too_long`, so they are constants, not configuration.
 */
export const SLACK_LIMITS = {
  /** Blocks per message. */
  blocks: 50,
  /** Characters per text object (section text, rich-text run). */
  text: 3000,
  /** Header block text. */
  header: 150,
  /** Button label, select option label. */
  buttonText: 75,
  /** Select placeholder. */
  placeholder: 150,
  /** Elements in a context block. */
  contextElements: 10,
  /** `block_id` / `action_id`. */
  id: 255,
  /** Link URLs (button url limit; rich-text links are not documented, so the same). */
  url: 3000,
  /**
   * Text across all blocks of one message. Slack documents 40,000 for `text` but rejects blocks
   * long before that (`msg_blocks_too_long` near 13,000 characters, bolt-js#2509): stay under.
   */
  messageText: 12_000,
  /** The notification fallback `text`: it is what a phone shows, keep it short. */
  fallback: 3000,
} as const;

export const ELLIPSIS = '…';

/**
 * `text` cut to at most `max` UTF-16 units, ending in "…" when cut. Never splits a surrogate
 * pair (an emoji half is rendered as a replacement box, or rejected).
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return '';
  let end = Math.max(0, max - ELLIPSIS.length);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end) + ELLIPSIS;
}

/** A URL Slack may link: http(s) only, normalised, within the length limit; otherwise undefined. */
export function safeUrl(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  const href = url.href;
  return href.length <= SLACK_LIMITS.url ? href : undefined;
}

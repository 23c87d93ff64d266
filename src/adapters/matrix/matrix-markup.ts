/**
 * Untrusted text made inert for a Matrix event: one function per output (the plain `body`, the
 * `org.matrix.custom.html` `formatted_body`), and the inline structure of a view (`{code}`,
 * `{strong}`, `{link}`) as the only way markup gets in.
 *
 * Every string starts with core's `escapeControl` (terminal escapes, bidi overrides, zero-width
 * characters made visible), is capped, then escaped for HTML. `@room` is broken with a WORD
 * JOINER in both outputs: the event's empty `m.mentions` already stops room pings on servers and
 * clients that implement intentional mentions (spec v1.7), and the joiner stops the legacy
 * `.m.rule.roomnotif` push rule (a body match on `@room`) on the ones that do not.
 */
import type { Inline, RichText } from '../../core/chat/thread-view.js';
import { MAX_NAME, personLabel, type Person } from '../../core/people.js';
import { escapeControl, escapeLine } from '../../core/render/escape-text.js';

const WORD_JOINER = '\u2060';
const ROOM_PING = /@(room)\b/gi;

/** Cuts `s` to at most `max` code points, ending in "…" when it was cut (never splits a surrogate pair). */
export function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  const points = Array.from(s);
  if (points.length <= max) return s;
  return `${points.slice(0, Math.max(0, max - 1)).join('')}…`;
}

function defuse(s: string): string {
  return s.replace(ROOM_PING, `@${WORD_JOINER}$1`);
}

/** Untrusted text for the plain `body`: newlines kept. */
export function plain(s: string, max: number): string {
  return defuse(clip(escapeControl(s), max));
}

/** Untrusted text for the plain `body` that must stay on one line (a header, a table cell). */
export function plainLine(s: string, max: number): string {
  return defuse(clip(escapeLine(s), max));
}

const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes the five HTML metacharacters; nothing else. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]!);
}

/** Untrusted text for `formatted_body`: escaped, newlines as `<br>`. */
export function html(s: string, max: number): string {
  return defuse(escapeHtml(clip(escapeControl(s), max))).replace(/\n/g, '<br>');
}

/** Untrusted one-line text for `formatted_body`. */
export function htmlLine(s: string, max: number): string {
  return defuse(escapeHtml(clip(escapeLine(s), max)));
}

/**
 * A URL allowed to become a link: absolute http(s) only, so an annotation's `javascript:` or
 * `data:` "runbook" stays text. Returns the normalised URL, or undefined.
 */
export function safeUrl(url: string): string | undefined {
  if (url.length > MAX_URL) return undefined;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
  return u.href;
}

const MAX_URL = 2048;

/** A Matrix user id (`@local:server`), the only thing a mention pill is built from. */
export function isUserId(id: string): boolean {
  return /^@[\x21-\x39\x3B-\x7E]+:[A-Za-z0-9.:[\]-]+$/.test(id) && id.length <= 255;
}

/** Permalink of a user, for a mention pill. */
export function userPermalink(userId: string): string {
  return `https://matrix.to/#/${encodeURIComponent(userId)}`;
}

/** One paragraph of inline runs as `{text, html}`; plain strings are untrusted text. */
export function inline(runs: RichText, max: number): { text: string; html: string } {
  let text = '';
  let out = '';
  for (const r of runs) {
    const part = inlineRun(r, max);
    text += part.text;
    out += part.html;
  }
  return { text, html: out };
}

function inlineRun(r: Inline, max: number): { text: string; html: string } {
  if (typeof r === 'string') return { text: plain(r, max), html: html(r, max) };
  if ('code' in r) return { text: `\`${plainLine(r.code, max)}\``, html: `<code>${htmlLine(r.code, max)}</code>` };
  if ('strong' in r) return { text: plain(r.strong, max), html: `<strong>${html(r.strong, max)}</strong>` };
  if ('person' in r) return person(r.person);
  return link(r.link.label, r.link.url, max);
}

/**
 * A person: a Matrix user as a pill (a matrix.to link clients draw as the user's chip; the
 * event's `m.mentions` does not list them, so it does not ping), anyone else by display name.
 * `body` carries the display name, as a client's own pill would.
 */
export function person(p: Person): { text: string; html: string } {
  const label = personLabel(p);
  if (p.via === 'matrix' && isUserId(p.id)) {
    return { text: plainLine(label, MAX_NAME + 1), html: `<a href="${escapeHtml(userPermalink(p.id))}">${htmlLine(label, MAX_NAME + 1)}</a>` };
  }
  return { text: plainLine(label, MAX_NAME + 1), html: htmlLine(label, MAX_NAME + 1) };
}

/** A link when the URL is safe; otherwise its label and URL as text. */
export function link(label: string, url: string, max: number): { text: string; html: string } {
  const href = safeUrl(url);
  if (!href) return { text: `${plainLine(label, max)} (${plainLine(url, 256)})`, html: `${htmlLine(label, max)} (${htmlLine(url, 256)})` };
  return { text: `${plainLine(label, max)} <${plainLine(href, MAX_URL)}>`, html: `<a href="${escapeHtml(href)}">${htmlLine(label, max)}</a>` };
}

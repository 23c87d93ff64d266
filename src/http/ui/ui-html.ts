/**
 * HTML for the memory view, escaped by construction: {@link h} is a tagged template whose every
 * interpolated value is text — made inert first (bidi overrides, zero-width and control
 * characters become visible escapes, render/escape-text.ts), then HTML-escaped — unless it is
 * markup {@link h} itself built. Alert text is hostile; nothing it says can become markup.
 */
import { escapeControl } from '../../core/render/escape-text.js';
import { normalizeLink } from '../../core/alert-links.js';

/** Markup built by {@link h} (or a constant of ours): the only thing interpolated as is. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Untrusted text as HTML text or attribute value: neutralised, then escaped. */
export function escapeHtml(text: string): string {
  return escapeControl(text).replace(/[&<>"']/g, (ch) => ENTITIES[ch]!);
}

export type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(v: Value): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

/** A fragment: literal parts are ours, interpolated values are escaped (arrays joined, nullish and false dropped). */
export function h(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + (strings[i + 1] ?? '');
  return new Html(out);
}

/** A link to an outside page: only http(s), and only when it parses; otherwise the text alone. */
export function outsideLink(raw: string | undefined, label: string, allowed?: (host: string) => boolean): Html {
  const check = normalizeLink(raw);
  if (!check?.ok || !/^https?:/i.test(check.url)) return h`<span>${label}</span>`;
  if (allowed && !allowed(new URL(check.url).hostname)) return h`<span>${label}</span>`;
  return h`<a href="${check.url}" rel="noopener noreferrer nofollow">${label}</a>`;
}

/** Our own path with the query given (values encoded). */
export function href(path: string, query: Record<string, string | number | undefined> = {}): string {
  const q = Object.entries(query)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  return q ? `${path}?${q}` : path;
}

/** A number with thousands separators (a figure's display; `data-figure` holds the plain number). */
export function fmt(n: number): string {
  return Number.isInteger(n) ? n.toLocaleString('en-US') : n.toLocaleString('en-US', { maximumFractionDigits: 2 });
}

/**
 * Seconds as a person says them, in the two largest units: `42 s`, `7 min 30 s`, `3 h 20 min`,
 * `2 d 4 h` (rounded to the smaller unit; a negative span, clocks disagreeing, is `0 s`). The one
 * place the view formats a duration.
 */
export function duration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return two(Math.floor(s / 60), 'min', s % 60, 's');
  const min = Math.round(s / 60);
  if (min < 1440) return two(Math.floor(min / 60), 'h', min % 60, 'min');
  const hours = Math.round(s / 3600);
  return two(Math.floor(hours / 24), 'd', hours % 24, 'h');
}

const two = (big: number, bigUnit: string, small: number, smallUnit: string): string =>
  small > 0 ? `${big} ${bigUnit} ${small} ${smallUnit}` : `${big} ${bigUnit}`;

/** An ISO time as `2026-03-01 12:07 UTC`. */
export function when(iso: string | undefined): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : `${new Date(t).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

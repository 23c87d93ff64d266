/**
 * The one redactor (issue 29 item 4): every known secret (the configured tokens, signing
 * secrets, API keys, the UI token, URL credentials) and every secret-shaped string is masked in
 * what leaves the process — chat (through the ledger's outbox items), the ledger, `/ui`, logs,
 * metrics, CLI output — upstream error text included, since PagerDuty, GitHub, a model server or
 * an MCP server may echo the request (its `Authorization` header) in an error body.
 *
 * The shapes are chosen so that identifiers never match: Kubernetes names, trigger keys and
 * fingerprints are lower-case, and the key-shaped patterns below need mixed case or a known
 * prefix, so redacting a whole ledger event never changes what it pairs with.
 */

/** What a masked secret becomes in text. */
export const REDACTED = '[redacted]';
/** What the credentials of a URL become: `https://***@host/…` (still readable as a URL). */
export const URL_MASK = '***';

/** Known secrets shorter than this are not searched for (too likely to be ordinary words). */
const MIN_KNOWN = 6;

/** `scheme://user:password@` — the userinfo of any URL in a text. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>\\]+@/gi;

/** Token shapes that are secrets wherever they appear. */
const SHAPES: readonly RegExp[] = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----|(?:[A-Za-z0-9+/=\s]|\\n)*)/g,
  /\bxox[abposre]-[A-Za-z0-9-]{10,}/g, // Slack bot/user/… tokens
  /\bxapp-[A-Za-z0-9-]{10,}/g, // Slack app-level tokens
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g, // GitHub fine-grained tokens
  /\bglpat-[A-Za-z0-9_-]{20,}/g, // GitLab tokens
  /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, // AWS access key ids
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, // JWTs
  /\bsyt_[A-Za-z0-9_-]{10,}/g, // Matrix (Synapse) access tokens
];

/**
 * `sk-…` API keys (OpenAI and compatible servers). A key mixes upper and lower case, or carries a
 * long run of letters and digits; a Kubernetes name that starts with `sk-` is lower-case words
 * between dashes (`sk-payments-api-eu-west-1`), so it is left alone.
 */
const API_KEY = /\b(?:sk|rk)-[A-Za-z0-9_-]{16,}/g;
const keyLike = (s: string): boolean => (/[A-Z]/.test(s) && /[a-z]/.test(s)) || /(?=[a-z]*[0-9])[A-Za-z0-9]{16,}/i.test(s);

/**
 * `Authorization: Bearer …`, `Token token=…`, `"api_key": "…"`, `password=…`, `?access_token=…`:
 * the key (and the auth scheme) are kept so a reader sees what was masked, the value is not.
 */
const KEYED =
  /((?:authorization|proxy-authorization|x-api-key|api[_-]?key|apikey|access[_-]?key|client[_-]?secret|signing[_-]?secret|secret|password|passwd|token|credentials?)(?:\\?["'])?\s*[:=]\s*(\\?["'])?)((?:bearer|token|basic|digest)\s+)?(token=)?(?:\[redacted\]|[^\s"',;&<>(){}[\]\\]{4,})/gi;
/** A bare auth scheme with its credential, outside any `key:` (`curl -H 'Bearer …'` echoed back). */
const SCHEME = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/-]{12,}=*/g;

/** Masks one text. */
export type RedactText = (text: string) => string;

/** The one redactor: masks the secrets it knows and every secret-shaped string. */
export interface Redactor {
  /** Masks secrets in a text. */
  text: RedactText;
  /**
   * A copy of a JSON-like value with every string in it (keys left alone) masked; same shape —
   * except, at its top level (a ledger event's own fields), the opaque ids a surface or the bot
   * made ({@link ID_KEYS}), kept exactly: they are what dedup and lookups match on. Deeper down
   * (alert labels, a view) a key named `id` or `user` is whatever its sender put there, and masked.
   */
  value<T>(value: T): T;
}

/**
 * The forms a known secret may take in text: as is, URL-encoded (a query string, a URL's
 * userinfo) and JSON-escaped (an error body quoting the request).
 */
function forms(secret: string): string[] {
  const out = new Set([secret]);
  try {
    out.add(encodeURIComponent(secret));
  } catch {
    // a lone surrogate: only the raw form can appear
  }
  out.add(JSON.stringify(secret).slice(1, -1));
  // An `Authorization` value (`Bearer abc…`, `Token token=abc…`): its credential alone too.
  const cred = /^(?:bearer|token|basic)\s+(?:token=)?(\S+)$/i.exec(secret.trim())?.[1];
  if (cred) out.add(cred);
  return [...out].filter((f) => f.length >= MIN_KNOWN);
}

/** Masks `known` values (longest first, so a secret containing another goes whole) and secret shapes. */
export function redactText(text: string, known: readonly string[] = []): string {
  if (text === '') return text;
  let out = text;
  for (const k of known) if (out.includes(k)) out = out.split(k).join(REDACTED);
  out = out.replace(URL_USERINFO, `$1${URL_MASK}@`);
  for (const p of SHAPES) out = out.replace(p, REDACTED);
  out = out.replace(API_KEY, (m) => (keyLike(m.slice(3)) ? REDACTED : m));
  out = out.replace(KEYED, (m, key: string, open: string | undefined, scheme: string | undefined, tokenEq: string | undefined) =>
    // `"secret": true` in JSON: a quoted key with an unquoted value is a number or a flag, not a credential.
    open === undefined && /["']\s*[:=]\s*$/.test(key) ? m : `${key}${scheme ?? ''}${tokenEq ?? ''}${REDACTED}`,
  );
  return out.replace(SCHEME, `$1 ${REDACTED}`);
}

/** A URL as safe to show: its user and password masked (`https://***@host/…`), the rest untouched. */
export function maskUrl(url: string): string {
  return url.replace(URL_USERINFO, `$1${URL_MASK}@`);
}

/**
 * The secrets inside a URL (its user and password, raw and decoded), so an error that quotes
 * them apart from the URL (git does) is masked too.
 */
export function urlSecrets(url: string | undefined): string[] {
  if (!url) return [];
  try {
    const u = new URL(url);
    return [u.username, u.password].flatMap((s) => {
      if (s === '') return [];
      try {
        return [s, decodeURIComponent(s)];
      } catch {
        return [s];
      }
    });
  } catch {
    return [];
  }
}

/** Builds the redactor for a set of known secrets (undefined and short ones ignored). */
export function createRedactor(secrets: Iterable<string | undefined> = []): Redactor {
  const known = new Set<string>();
  for (const s of secrets) if (typeof s === 'string' && s.trim().length >= MIN_KNOWN) for (const f of forms(s)) known.add(f);
  const list = [...known].sort((a, b) => b.length - a.length);
  const text: RedactText = (t) => redactText(t, list);
  const value = <T>(v: T): T => walk(v, text, ID_KEYS) as T;
  return { text, value };
}

/**
 * Fields that hold an id a chat surface, a source or the bot generated (a Matrix event id, a
 * Slack ts, an outbox or open id, a room or user id), never text anyone wrote into an alert or a
 * message. They are not masked: a random Matrix event id now and then reads `…-sk-8qAPiJX…`,
 * which the `sk-` key shape takes for an API key, and the event recorded as `…-[redacted]` was
 * then another event to dedup and lookups (one vote of a 6,000-event batch lost, once in a few
 * runs). Trigger keys and fingerprints are still masked (they are built from alert labels).
 */
const ID_KEYS = new Set(['eventId', 'messageRef', 'outboxId', 'openId', 'id', 'requestId', 'incidentId', 'reopens', 'threadOf', 'channel', 'thread', 'user']);

/** Masks every string in `v`; a string directly under a key in `keep` (the top level only) stays as is. */
function walk(v: unknown, text: RedactText, keep?: ReadonlySet<string>): unknown {
  if (typeof v === 'string') return text(v);
  if (Array.isArray(v)) {
    let changed = false;
    const out = v.map((x) => {
      const y = walk(x, text);
      if (y !== x) changed = true;
      return y;
    });
    return changed ? out : v;
  }
  if (v === null || typeof v !== 'object' || !isPlain(v)) return v;
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const y = typeof x === 'string' && keep?.has(k) ? x : walk(x, text);
    if (y !== x) changed = true;
    out[k] = y;
  }
  return changed ? out : v;
}

function isPlain(v: object): boolean {
  const p = Object.getPrototypeOf(v) as unknown;
  return p === Object.prototype || p === null;
}

/** A redactor that knows no secrets: shapes and URL credentials only. */
export const shapeRedactor: Redactor = createRedactor();

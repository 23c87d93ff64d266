/**
 * PagerDuty's REST API v2, the history part `reprise import pagerduty` reads:
 * `GET /incidents?statuses[]=resolved&since=&until=` (every page: `offset`/`limit`/`more`),
 * `GET /incidents/{id}/notes` and `GET /incidents/{id}/log_entries?is_overview=true` (the
 * `resolve_log_entry`). A 429 waits for its `Retry-After`, a 5xx or a network error backs off,
 * each up to `maxAttempts`; a refused token is fatal at once and says how to fix it. The token
 * never leaves this adapter, not even in an error body that echoes the request.
 */
import { backoffDelay, type BackoffPolicy } from '../../core/backoff.js';
import { createRedactor } from '../../core/redact.js';
import { PagerDutyReadError, type PagerDutyHistoryPort, type PagerDutyNote, type PagerDutyResolve } from '../../ports/pagerduty-history.js';
import { retryAfterMs } from './pagerduty-rest.js';

export interface PagerDutyHistoryOptions {
  /** `https://api.pagerduty.com`, or a stand-in's. */
  apiUrl: string;
  token: string;
  timeoutMs: number;
  maxAttempts: number;
  backoff: BackoffPolicy;
  fetch?: typeof fetch;
  /** How a retry waits (tests pass one that does not). */
  sleep?: (ms: number) => Promise<void>;
  /** Told before each wait, so a long run says why it is quiet. */
  onWait?: (ms: number, why: string) => void;
}

/** PagerDuty's largest page. */
const PAGE = 100;
/** The most of one answer read: a page of 100 incidents, or an incident's notes, is far less. */
const MAX_BODY_CHARS = 32_000_000;
/** The newest notes of an incident read: a bot posting hundreds says nothing more about the fix. */
const MAX_NOTES = 200;
/** PagerDuty's classic pagination stops at offset + limit = 10 000. */
const MAX_OFFSET = 10_000;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
const obj = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

function person(v: unknown): { id?: string; name?: string } | undefined {
  const o = obj(v);
  const id = str(o?.['id']);
  const name = str(o?.['summary']) ?? str(o?.['name']);
  return id || name ? { ...(id ? { id } : {}), ...(name ? { name } : {}) } : undefined;
}

export function pagerDutyHistory(opts: PagerDutyHistoryOptions): PagerDutyHistoryPort {
  const base = opts.apiUrl.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? fetch;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const redact = createRedactor([opts.token]).text;

  async function get(path: string, params: URLSearchParams): Promise<Record<string, unknown>> {
    const url = `${base}${path}${params.size > 0 ? `?${params.toString()}` : ''}`;
    for (let attempt = 1; ; attempt++) {
      let res: Response | undefined;
      let failure = '';
      let wait: number | undefined;
      try {
        res = await doFetch(url, {
          headers: { Accept: 'application/vnd.pagerduty+json;version=2', Authorization: `Token token=${opts.token}` },
          signal: AbortSignal.timeout(opts.timeoutMs),
        });
      } catch (err) {
        res = undefined;
        failure = `PagerDuty unreachable: ${redact((err as Error).message)}`;
      }
      if (res) {
        if (res.ok) {
          const raw = await res.text().catch(() => '');
          if (raw.length > MAX_BODY_CHARS)
            throw new PagerDutyReadError(`PagerDuty answered ${path} with more than ${MAX_BODY_CHARS / 1_000_000} MB`, { fatal: false, status: res.status });
          let body: unknown;
          try {
            body = JSON.parse(raw);
          } catch {
            body = undefined;
          }
          const o = obj(body);
          if (!o) throw new PagerDutyReadError(`PagerDuty answered ${path} with something that is not a JSON object`, { fatal: false, status: res.status });
          return o;
        }
        // Masked whole before it is cut: a cut through a secret would leave its start readable.
        const text = redact(await res.text().catch(() => '')).slice(0, 300);
        let message = text;
        try {
          const e = obj(obj(JSON.parse(text))?.['error']);
          if (typeof e?.['message'] === 'string') message = e['message'] + (Array.isArray(e['errors']) ? `: ${e['errors'].map(String).join('; ')}` : '');
        } catch {
          // Not JSON: the text itself says what went wrong.
        }
        failure = `PagerDuty answered ${res.status} to GET ${path}${message ? ` (${message.slice(0, 200)})` : ''}`;
        if (res.status === 401 || res.status === 403)
          throw new PagerDutyReadError(
            `${failure}: the token was refused — set pagerduty.token (or REPRISE_PAGERDUTY_TOKEN) to a REST API key that can read incidents`,
            { fatal: true, status: res.status },
          );
        if (res.status === 400) throw new PagerDutyReadError(failure, { fatal: true, status: res.status });
        if (res.status !== 429 && res.status !== 408 && res.status < 500) throw new PagerDutyReadError(failure, { fatal: false, status: res.status });
        wait = res.status === 429 ? retryAfterMs(res.headers.get('retry-after'), Date.now()) : undefined;
      }
      if (attempt >= opts.maxAttempts)
        throw new PagerDutyReadError(`${failure} — gave up after ${attempt} attempts`, { fatal: res?.status === 429, ...(res ? { status: res.status } : {}) });
      const ms = backoffDelay(opts.backoff, attempt, { serverWaitMs: wait === undefined ? undefined : Math.min(wait, opts.backoff.maxMs), floorMs: 0 });
      opts.onWait?.(ms, res?.status === 429 ? `PagerDuty rate limit (429${wait !== undefined ? ', Retry-After' : ''})` : failure);
      await sleep(ms);
    }
  }

  return {
    async resolvedIncidents(q, onPage) {
      const out: unknown[] = [];
      // The next page starts after what this one held: PagerDuty may answer fewer than asked for.
      for (let offset = 0; offset < MAX_OFFSET;) {
        const params = new URLSearchParams([
          ['statuses[]', 'resolved'],
          ['since', q.since.toISOString()],
          ['until', q.until.toISOString()],
          ['sort_by', 'created_at:asc'],
          ['limit', String(PAGE)],
          ['offset', String(offset)],
          ['total', 'false'],
        ]);
        for (const s of q.serviceIds) params.append('service_ids[]', s);
        const page = await get('/incidents', params);
        const items = Array.isArray(page['incidents']) ? page['incidents'] : [];
        out.push(...items);
        onPage?.(out.length);
        if (page['more'] !== true || items.length === 0) return out;
        offset += items.length;
      }
      throw new PagerDutyReadError(`more than ${MAX_OFFSET} resolved incidents in the window: import a shorter --since, or one --service at a time`, {
        fatal: true,
      });
    },

    async notes(incidentId) {
      const page = await get(`/incidents/${encodeURIComponent(incidentId)}/notes`, new URLSearchParams());
      const items = Array.isArray(page['notes']) ? page['notes'] : [];
      const notes: PagerDutyNote[] = [];
      for (const n of items) {
        const o = obj(n);
        const content = typeof o?.['content'] === 'string' ? o['content'] : undefined;
        if (content === undefined) continue;
        const at = str(o?.['created_at']);
        const user = person(o?.['user']);
        notes.push({ content, ...(at ? { createdAt: at } : {}), ...(user ? { user } : {}) });
      }
      return notes.slice(-MAX_NOTES);
    },

    async resolve(incidentId) {
      // The overview log is short (trigger, ack, resolve…); its first page holds the resolve.
      const page = await get(
        `/incidents/${encodeURIComponent(incidentId)}/log_entries`,
        new URLSearchParams([
          ['is_overview', 'true'],
          ['limit', String(PAGE)],
        ]),
      );
      const items = (Array.isArray(page['log_entries']) ? page['log_entries'] : []).map(obj);
      const entry = items.findLast((e) => e?.['type'] === 'resolve_log_entry');
      if (!entry) return undefined;
      const channel = obj(entry['channel']);
      const message = str(entry['message']) ?? str(channel?.['message']) ?? str(channel?.['details']) ?? str(channel?.['summary']) ?? str(entry['summary']);
      const at = str(entry['created_at']);
      const by = person(entry['agent']);
      const r: PagerDutyResolve = { ...(message ? { message } : {}), ...(at ? { at } : {}), ...(by ? { by } : {}) };
      return r;
    },
  };
}

/**
 * PagerDuty's REST API v2, the part the bot uses: acknowledging an incident
 * (`PUT /incidents/{id}` with `status: acknowledged`, as the `From` user). A failure says whether
 * trying again can help: 429 (with its `Retry-After`), 5xx and network errors can; a refused
 * token, an unknown incident or a bad request cannot.
 */
import type { PagerDutyPort } from '../../core/bot/bot-context.js';
import { PagerDutyCallError } from '../../core/bot/pagerduty-flow.js';
import { createRedactor } from '../../core/redact.js';

export interface PagerDutyRestOptions {
  /** `https://api.pagerduty.com`, or a stand-in's. */
  apiUrl: string;
  token: string;
  /** Email of the PagerDuty user the call is made as. */
  from: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

/** `Retry-After` in seconds or as a date, as ms; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number): number | undefined {
  if (!header) return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs) && secs >= 0) return Math.min(secs * 1000, 3_600_000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), 3_600_000);
}

export function pagerDutyRest(opts: PagerDutyRestOptions): PagerDutyPort {
  const base = opts.apiUrl.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? fetch;
  // An error body (PagerDuty's, or a proxy's in front of it) may echo the request: its
  // `Authorization: Token token=…` never leaves this adapter.
  const redact = createRedactor([opts.token]).text;
  return {
    async acknowledge(incidentId: string): Promise<void> {
      let res: Response;
      try {
        res = await doFetch(`${base}/incidents/${encodeURIComponent(incidentId)}`, {
          method: 'PUT',
          headers: {
            Accept: 'application/vnd.pagerduty+json;version=2',
            'Content-Type': 'application/json',
            Authorization: `Token token=${opts.token}`,
            From: opts.from,
          },
          body: JSON.stringify({ incident: { type: 'incident_reference', status: 'acknowledged' } }),
          signal: AbortSignal.timeout(opts.timeoutMs),
        });
      } catch (err) {
        throw new PagerDutyCallError(`PagerDuty unreachable: ${redact((err as Error).message)}`, { retryable: true, cause: err });
      }
      if (res.ok) {
        await res.body?.cancel().catch(() => undefined);
        return;
      }
      // Masked whole before it is cut: a cut through a secret would leave its start readable.
      const text = redact(await res.text().catch(() => '')).slice(0, 300);
      let message = text;
      try {
        const body = JSON.parse(text) as { error?: { message?: unknown; errors?: unknown } };
        if (typeof body.error?.message === 'string')
          message = body.error.message + (Array.isArray(body.error.errors) ? `: ${body.error.errors.map(String).join('; ')}` : '');
      } catch {
        // Not JSON: the text itself says what went wrong.
      }
      const wait = retryAfterMs(res.headers.get('retry-after'), Date.now());
      const retryable = res.status === 429 || res.status === 408 || res.status >= 500;
      throw new PagerDutyCallError(`PagerDuty answered ${res.status}${message ? ` (${message.slice(0, 200)})` : ''}`, {
        retryable,
        ...(wait !== undefined ? { retryAfterMs: wait } : {}),
      });
    },
  };
}

/**
 * A failed Slack call as a {@link DeliveryError}: whether the outbox should try again, and
 * when. Read from the Web API client's coded errors (by `code`, so a second copy of the SDK in
 * node_modules still matches) and from `response_url` HTTP answers.
 */
import { DeliveryError } from '../../core/chat/chat-types.js';

/** Platform errors (`ok: false`) that are Slack's trouble, not ours: worth another try. */
const RETRYABLE_PLATFORM = new Set(['ratelimited', 'rate_limited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout', 'timeout']);
/** Of those, the ones after which Slack may have acted on the call all the same. */
const UNKNOWN_PLATFORM = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout', 'timeout']);

interface CodedSlackError {
  code?: unknown;
  data?: { error?: unknown };
  retryAfter?: unknown;
  statusCode?: unknown;
  headers?: Record<string, string>;
  original?: unknown;
  message?: unknown;
}

/** Seconds from a `Retry-After` header (delta-seconds or an HTTP date), as milliseconds. */
export function retryAfterMs(header: string | null | undefined, nowMs: number = Date.now()): number | undefined {
  if (!header) return undefined;
  const s = header.trim();
  if (/^\d+$/.test(s)) return Number(s) * 1000;
  const at = Date.parse(s);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined;
}

/** An error thrown by the Web API client (`chat.postMessage`, …) as a DeliveryError. */
export function toDeliveryError(method: string, err: unknown): DeliveryError {
  if (err instanceof DeliveryError) return err;
  const e = (err ?? {}) as CodedSlackError;
  switch (e.code) {
    case 'slack_webapi_rate_limited_error': {
      const seconds = typeof e.retryAfter === 'number' ? e.retryAfter : undefined;
      return new DeliveryError(`slack ${method}: rate limited${seconds === undefined ? '' : `, retry after ${seconds} s`}`, {
        retryable: true,
        ...(seconds === undefined ? {} : { retryAfterMs: seconds * 1000 }),
        cause: err,
      });
    }
    case 'slack_webapi_platform_error': {
      const code = typeof e.data?.error === 'string' ? e.data.error : 'unknown_error';
      return new DeliveryError(`slack ${method}: ${code}`, { retryable: RETRYABLE_PLATFORM.has(code), outcomeUnknown: UNKNOWN_PLATFORM.has(code), cause: err });
    }
    case 'slack_webapi_http_error': {
      const status = typeof e.statusCode === 'number' ? e.statusCode : 0;
      const after = status === 429 ? retryAfterMs(e.headers?.['retry-after']) : undefined;
      return new DeliveryError(`slack ${method}: HTTP ${status}`, {
        retryable: status >= 500 || status === 429 || status === 408,
        ...(after === undefined ? {} : { retryAfterMs: after }),
        // A 5xx or a 408 may come after Slack acted on the call.
        outcomeUnknown: status >= 500 || status === 408,
        cause: err,
      });
    }
    case 'slack_webapi_request_error': {
      const why = e.original instanceof Error ? e.original.message : 'request failed';
      // A timeout or a reset connection: Slack may have posted the message all the same.
      return new DeliveryError(`slack ${method}: ${why}`, { retryable: true, outcomeUnknown: true, cause: err });
    }
    default: {
      // Unknown failures (a 429 without Retry-After, a bug in between): back off and retry.
      const why = err instanceof Error ? err.message : String(err);
      return new DeliveryError(`slack ${method}: ${why}`, { retryable: true, outcomeUnknown: true, cause: err });
    }
  }
}

/**
 * A `response_url` answer as a DeliveryError, or undefined when it was accepted. Slack answers
 * 404 `expired_url` / `used_url` once the URL is 30 minutes old or used five times: final.
 */
export function responseUrlError(status: number, body: string, retryAfter: string | null): DeliveryError | undefined {
  if (status >= 200 && status < 300) return undefined;
  const detail = body.trim().slice(0, 100) || `HTTP ${status}`;
  if (status === 429) {
    const after = retryAfterMs(retryAfter);
    return new DeliveryError(`slack response_url: rate limited`, { retryable: true, ...(after === undefined ? {} : { retryAfterMs: after }) });
  }
  return new DeliveryError(`slack response_url: ${detail}`, { retryable: status >= 500 || status === 408 });
}

/**
 * What a failed Matrix request means for the outbox: `M_LIMIT_EXCEEDED` (429) comes back after
 * `retry_after_ms`; a 5xx or a network failure may pass; a refusal (`M_FORBIDDEN`, an unknown
 * room, a revoked token, an event the server will never take) will not, so the outbox stops.
 */
import { DeliveryError } from '../../core/chat/chat-types.js';

/** The fields matrix-bot-sdk's errors carry: `MatrixError`, or the raw response of a non-2xx. */
interface SdkError {
  errcode?: unknown;
  error?: unknown;
  statusCode?: unknown;
  retryAfterMs?: unknown;
  body?: unknown;
  code?: unknown;
  message?: unknown;
}

const HINTS: Record<string, string> = {
  M_FORBIDDEN: 'is the bot invited to and joined in the room, with permission to post?',
  M_UNKNOWN_TOKEN: 'the access token was rejected: set a fresh MATRIX_ACCESS_TOKEN',
  M_MISSING_TOKEN: 'no access token was sent: set MATRIX_ACCESS_TOKEN',
  M_TOO_LARGE: 'the event is over the size limit',
};

/** Translates whatever a send threw into a {@link DeliveryError}. `what` names the call ("post to !room:hs"). */
export function toDeliveryError(err: unknown, what: string): DeliveryError {
  if (err instanceof DeliveryError) return err;
  const e = (typeof err === 'object' && err !== null ? err : {}) as SdkError;
  const status = typeof e.statusCode === 'number' ? e.statusCode : undefined;
  const errcode = typeof e.errcode === 'string' ? e.errcode : undefined;
  if (status !== undefined || errcode !== undefined) {
    const detail = `${errcode ?? `HTTP ${status}`}${typeof e.error === 'string' ? `: ${e.error}` : ''}`;
    if (errcode === 'M_LIMIT_EXCEEDED' || status === 429) {
      const body = (typeof e.body === 'object' && e.body !== null ? e.body : {}) as { retry_after_ms?: unknown };
      const ms = typeof e.retryAfterMs === 'number' ? e.retryAfterMs : typeof body.retry_after_ms === 'number' ? body.retry_after_ms : undefined;
      return new DeliveryError(`matrix ${what}: rate limited (${detail})`, { retryable: true, ...(ms !== undefined ? { retryAfterMs: ms } : {}), cause: err });
    }
    if (status !== undefined && (status >= 500 || status === 408)) {
      return new DeliveryError(`matrix ${what}: homeserver error (${detail})`, { retryable: true, cause: err });
    }
    const hint = errcode ? HINTS[errcode] : undefined;
    return new DeliveryError(`matrix ${what}: refused (${detail})${hint ? ` — ${hint}` : ''}`, { retryable: false, cause: err });
  }
  // No HTTP answer at all: connection refused or reset, DNS, timeout. The homeserver may be back.
  const msg = typeof e.message === 'string' ? e.message : String(err);
  const code = typeof e.code === 'string' ? ` ${e.code}` : '';
  return new DeliveryError(`matrix ${what}: homeserver unreachable (${msg}${code})`, { retryable: true, cause: err });
}

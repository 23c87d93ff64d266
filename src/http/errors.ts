/**
 * The one map from error code to HTTP status, and the JSON error body every rejection uses.
 */
import { isRepriseError, type ErrorCode } from '../core/errors.js';

export const HTTP_STATUS_BY_CODE = {
  bad_request: 400,
  invalid_payload: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  request_timeout: 408,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const satisfies Record<ErrorCode, number>;

/** HTTP status for an error code. */
export function httpStatusFor(code: ErrorCode): number {
  return HTTP_STATUS_BY_CODE[code];
}

export interface HttpErrorBody {
  error: { code: ErrorCode; message: string; requestId: string };
}

export interface HttpErrorReply {
  status: number;
  body: HttpErrorBody;
  /** True when the failure is ours (5xx): log at error with the cause, not warn. */
  serverFault: boolean;
}

/** Bound what a client-controlled message can make us echo back. */
const MAX_MESSAGE = 1000;

/**
 * Turn anything thrown while handling a request into a safe reply. Client errors carry our
 * own message (we wrote it); server errors only ever show a correlation id.
 */
export function toHttpError(err: unknown, requestId: string): HttpErrorReply {
  if (isRepriseError(err)) {
    const status = httpStatusFor(err.code);
    const serverFault = status >= 500;
    const raw = err.userMessage ?? (serverFault ? internalMessage(requestId) : err.message);
    const message = raw.length > MAX_MESSAGE ? `${raw.slice(0, MAX_MESSAGE - 3)}...` : raw;
    return { status, serverFault, body: { error: { code: err.code, message, requestId } } };
  }
  return {
    status: 500,
    serverFault: true,
    body: { error: { code: 'internal', message: internalMessage(requestId), requestId } },
  };
}

function internalMessage(requestId: string): string {
  return `internal error; quote correlation id ${requestId}`;
}

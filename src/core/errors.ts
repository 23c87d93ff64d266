/**
 * One coded error type for the whole app. The edge (HTTP, chat, CLI) maps `code` to its own
 * vocabulary (status, exit code); users see `userMessage` or a correlation id, never a stack.
 */

export const ERROR_CODES = [
  'bad_request',
  'unsupported_media_type',
  'payload_too_large',
  'unauthorized',
  'forbidden',
  'invalid_payload',
  'not_found',
  'method_not_allowed',
  'request_timeout',
  'rate_limited',
  'unavailable',
  'internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export interface RepriseErrorOptions {
  /** Safe to show a human (chat reply, HTTP body). Defaults to nothing: callers decide. */
  userMessage?: string;
  /** Structured context for logs (e.g. schema issues); never rendered with a stack. */
  details?: unknown;
  cause?: unknown;
}

/** An error that knows what kind of failure it is, so the edge can answer precisely. */
export class RepriseError extends Error {
  override readonly name = 'RepriseError';
  readonly code: ErrorCode;
  readonly userMessage?: string;
  readonly details?: unknown;

  constructor(code: ErrorCode, message: string, options: RepriseErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.userMessage !== undefined) this.userMessage = options.userMessage;
    if (options.details !== undefined) this.details = options.details;
  }
}

/** Narrowing helper that also works across duplicated module instances (checks shape). */
export function isRepriseError(err: unknown): err is RepriseError {
  if (err instanceof RepriseError) return true;
  if (!(err instanceof Error) || err.name !== 'RepriseError') return false;
  const code: unknown = (err as Error & { code?: unknown }).code;
  return typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code);
}

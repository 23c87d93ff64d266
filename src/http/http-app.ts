/**
 * What every HTTP surface of Reprise shares (the public port and the control socket): a hono
 * app whose requests carry a request id and a child logger, and one error path — anything
 * thrown becomes the JSON error body of errors.ts with its status, logged once, with a request
 * id the caller can quote. Surfaces add their routes between {@link createHttpApp} and
 * {@link finishHttpApp}.
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { RepriseError } from '../core/errors.js';
import type { Logger } from '../ports/logger.js';
import { toHttpError } from './errors.js';

/** Per-request context the routes read: hono's variables. */
export interface HttpVars {
  requestId: string;
  log: Logger;
  /**
   * On the public port: read a body whose signature can only be checked once it is read, in the
   * verify pool (admission.ts), under the size limit and the body deadline. `route` names the
   * sender for the pool and metrics (`slack`); `limitBytes` overrides the port's body limit.
   */
  readSigned?: (c: HttpContext, route: string, limitBytes?: number) => Promise<Uint8Array>;
  /** The metrics route label of a request refused before any route matched it (admission.ts). */
  routeLabel?: string;
}
export type HttpEnv = { Variables: HttpVars };
export type HttpApp = Hono<HttpEnv>;
export type HttpContext = Context<HttpEnv>;

/** The Node request and response behind a hono context; absent when a test calls `app.request()`. */
export interface NodeBindings {
  incoming?: http.IncomingMessage;
  outgoing?: http.ServerResponse;
}

export function nodeBindings(c: Context): NodeBindings {
  return (c.env ?? {}) as NodeBindings;
}

/** The peer's address as the Node server saw it (no proxy header is trusted). */
export function remoteAddress(c: Context): string | undefined {
  return nodeBindings(c).incoming?.socket?.remoteAddress;
}

/** 127.0.0.0/8, ::1 and their IPv4-mapped form; an unknown peer is not loopback. */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4 === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

export interface HttpAppOptions {
  logger: Logger;
  /** Header sent with a 401 (`Bearer realm="reprise"`); none when the surface has no bearer auth. */
  authenticate?: string;
  /** Take a well-formed `X-Request-Id` from the caller instead of minting one (the public port does). */
  trustRequestId?: boolean;
}

/** One surface's error answer: the coded JSON body, logged at warn (client) or error (ours). */
export type ErrorResponder = (c: Context, err: unknown) => Response;

export function errorResponder(opts: HttpAppOptions): ErrorResponder {
  return (c, err) => {
    const ctx = c as HttpContext;
    const requestId = ctx.get('requestId') ?? randomUUID();
    const log = ctx.get('log') ?? opts.logger;
    const e = toHttpError(err, requestId);
    const fields = { status: e.status, code: e.body.error.code, userAgent: c.req.header('user-agent') };
    if (e.serverFault) log.error({ ...fields, err }, `request failed: ${err instanceof Error ? err.message : String(err)}`);
    else log.warn(fields, `rejected: ${e.body.error.message}`);
    const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
    if (e.status === 401 && opts.authenticate) headers['WWW-Authenticate'] = opts.authenticate;
    // A body we refused (or did not finish) reading may still be arriving: closing is cheaper
    // than draining it, and a sender refused early must not keep its connection open for free.
    const announced = Number(c.req.header('content-length') ?? 0) > 0 || c.req.header('transfer-encoding') !== undefined;
    if (announced || e.status === 413 || e.status === 408 || (isRepriseError(err) && err.closeConnection)) headers['Connection'] = 'close';
    if (isRepriseError(err) && err.retryAfterS !== undefined) headers['Retry-After'] = String(err.retryAfterS);
    return c.json(e.body, e.status as 400, headers);
  };
}

/** A refusal the edge answers with extra headers: `Retry-After`, and closing the connection. */
export class EdgeError extends RepriseError {
  readonly retryAfterS?: number;
  readonly closeConnection: boolean;
  constructor(code: ConstructorParameters<typeof RepriseError>[0], message: string, opts: { retryAfterS?: number; closeConnection?: boolean } = {}) {
    // Our own words (what to do, when to retry), safe to show even on a 5xx.
    super(code, message, { userMessage: message });
    if (opts.retryAfterS !== undefined) this.retryAfterS = opts.retryAfterS;
    this.closeConnection = opts.closeConnection ?? false;
  }
}

function isRepriseError(err: unknown): err is EdgeError {
  return err instanceof EdgeError;
}

/** The app with request ids and per-request loggers; add routes, then call {@link finishHttpApp}. */
export function createHttpApp(opts: HttpAppOptions): { app: HttpApp; errorResponse: ErrorResponder } {
  const app: HttpApp = new Hono<HttpEnv>();
  const requestIds: MiddlewareHandler<HttpEnv> = async (c, next) => {
    const incoming = opts.trustRequestId ? c.req.header('x-request-id') : undefined;
    const requestId = incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    c.set('requestId', requestId);
    c.set('log', opts.logger.child({ requestId, method: c.req.method, path: c.req.path.slice(0, 200) }));
    await next();
    c.res.headers.set('X-Request-Id', requestId);
    if (!c.res.headers.has('Cache-Control')) c.res.headers.set('Cache-Control', 'no-store');
  };
  app.use(requestIds);
  return { app, errorResponse: errorResponder(opts) };
}

/**
 * The end of every surface: 405 for a known path with the wrong method (naming the right ones),
 * 404 for the rest, and the one error handler.
 */
export function finishHttpApp(app: HttpApp, errorResponse: ErrorResponder, allowed: Record<string, string> = {}): void {
  for (const [path, allow] of Object.entries(allowed)) {
    app.all(path, (c) => {
      const res = errorResponse(c, new RepriseError('method_not_allowed', `method ${c.req.method} not allowed on ${path}; use ${allow}`));
      res.headers.set('Allow', allow);
      return res;
    });
  }
  app.notFound((c) => errorResponse(c, new RepriseError('not_found', `no route for ${c.req.method} ${c.req.path.slice(0, 200)}`)));
  // bearerAuth rejects by throwing an HTTPException carrying our own 401 response.
  app.onError((err, c) => (err instanceof HTTPException && err.res ? err.res : errorResponse(c, err)));
}

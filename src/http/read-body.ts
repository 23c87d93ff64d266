/**
 * The steps between a raw request and a JSON value, each failing with its own coded error:
 * content type (415), size (413), deadline (408), UTF-8 (400), JSON syntax (400). Exported
 * separately so a signed webhook (PagerDuty HMAC) can verify the raw bytes before decoding.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { RepriseError } from '../core/errors.js';
import { EdgeError, nodeBindings } from './http-app.js';

/**
 * Require `application/json`, optionally with `charset=utf-8`.
 * @throws RepriseError `unsupported_media_type`
 */
export function assertJsonContentType(header: string | undefined): void {
  const [type = '', ...params] = (header ?? '').split(';').map((s) => s.trim().toLowerCase());
  if (type !== 'application/json') {
    throw new RepriseError(
      'unsupported_media_type',
      header ? `content type must be application/json, got "${header.slice(0, 100)}"` : 'content type must be application/json, got none',
    );
  }
  for (const p of params) {
    const [k, v = ''] = p.split('=').map((s) => s.trim());
    if (k === 'charset' && !['utf-8', 'utf8', '"utf-8"'].includes(v)) {
      throw new RepriseError('unsupported_media_type', `charset must be utf-8, got "${v.slice(0, 40)}"`);
    }
  }
}

function tooLarge(limit: number, what: string): EdgeError {
  return new EdgeError('payload_too_large', `request body ${what} exceeds the limit of ${limit} bytes`, { closeConnection: true });
}

export interface ReadBodyOptions {
  limitBytes: number;
  /** The whole body must have arrived this long after the read starts (ms); 408 otherwise. */
  deadlineMs?: number;
  /** Told the size of every chunk as it arrives (the verify pool measures a sender's pace). */
  onChunk?: (bytes: number) => void;
  /** Aborting it stops the read at once and rejects with the signal's reason (a shed sender). */
  signal?: AbortSignal;
}

/**
 * Read a request's whole body, refusing early: a declared `Content-Length` over the limit is
 * rejected before reading a byte, a streamed (chunked) body as soon as it passes the limit,
 * a body still arriving at the deadline with 408. Bytes past a refusal are discarded, never
 * buffered, and the connection is closed after the answer. Reads the Node request directly
 * (every chunk counted as it arrives); an in-process `app.request()` is read whole.
 * @throws RepriseError `payload_too_large` | `request_timeout` | `bad_request` (client aborted)
 */
export async function readRequestBody(c: Context, opts: ReadBodyOptions): Promise<Uint8Array> {
  const declared = c.req.header('content-length');
  if (declared !== undefined && Number(declared) > opts.limitBytes) throw tooLarge(opts.limitBytes, `of ${declared} bytes`);
  const incoming = nodeBindings(c).incoming;
  if (!incoming) {
    const raw = new Uint8Array(await c.req.arrayBuffer());
    if (raw.length > opts.limitBytes) throw tooLarge(opts.limitBytes, 'stream');
    return raw;
  }
  return readIncoming(incoming, opts);
}

function readIncoming(req: IncomingMessage, opts: ReadBodyOptions): Promise<Uint8Array> {
  const { limitBytes, signal } = opts;
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const timer =
      opts.deadlineMs === undefined
        ? undefined
        : setTimeout(
            () =>
              settle(
                new EdgeError('request_timeout', `request body not received within ${opts.deadlineMs} ms (server.body_timeout); send it faster`, {
                  closeConnection: true,
                }),
              ),
            opts.deadlineMs,
          );
    const onAbort = (): void => settle(signal!.reason as Error);
    const settle = (err?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (err) {
        // Keep the stream flowing with nobody listening: the rest is discarded, not buffered.
        chunks.length = 0;
        req.resume();
        reject(err);
      } else resolve(Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limitBytes) return settle(tooLarge(limitBytes, 'stream'));
      chunks.push(chunk);
      opts.onChunk?.(chunk.length);
    };
    const onEnd = (): void => settle();
    const onError = (e: Error): void => settle(new RepriseError('bad_request', `could not read request body: ${e.message}`, { cause: e }));
    const onClose = (): void => settle(new RepriseError('bad_request', 'client closed the connection before the body ended'));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (req.readableEnded) return settle();
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** @throws RepriseError `bad_request` when the bytes are not valid UTF-8. */
export function decodeUtf8(body: Uint8Array): string {
  try {
    return utf8.decode(body);
  } catch {
    return badUtf8(body);
  }
}

/** True when `bytes` is valid UTF-8 (with `stream`, an unfinished trailing sequence is fine). */
function validPrefix(bytes: Uint8Array, stream = true): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream });
    return true;
  } catch {
    return false;
  }
}

function badUtf8(body: Uint8Array): never {
  // Point at the first bad byte so the sender can find it. Prefix validity is monotone, so a
  // binary search costs ~20 decodes even for a body at the size limit.
  let lo = 0;
  let hi = body.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (validPrefix(body.subarray(0, mid))) lo = mid;
    else hi = mid - 1;
  }
  // `lo` may sit just past an unfinished sequence's lead byte; report where that sequence starts.
  let start = lo;
  if (!validPrefix(body.subarray(0, lo), false)) {
    while (start > 0 && ((body[start - 1] ?? 0) & 0xc0) === 0x80) start--;
    if (start > 0) start--;
  }
  const where = lo >= body.length ? `it ends inside a multi-byte sequence at offset ${start}` : `first bad byte at offset ${start}`;
  throw new RepriseError('bad_request', `request body is not valid UTF-8 (${where})`);
}

/** @throws RepriseError `bad_request` naming the parser's complaint. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw new RepriseError('bad_request', `malformed JSON: ${reason.slice(0, 200)}`);
  }
}

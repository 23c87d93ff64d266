/**
 * The steps between a raw request and a JSON value, each failing with its own coded error:
 * content type (415), size (413), UTF-8 (400), JSON syntax (400). Exported separately so a
 * signed webhook (PagerDuty HMAC) can verify the raw bytes before decoding.
 */
import type { IncomingMessage } from 'node:http';
import { RepriseError } from '../core/errors.js';

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

function tooLarge(limit: number, what: string): RepriseError {
  return new RepriseError('payload_too_large', `request body ${what} exceeds the limit of ${limit} bytes`);
}

/**
 * Read the whole body, refusing early: a declared `Content-Length` over the limit is rejected
 * before reading a byte, and a streamed (chunked) body is cut off as soon as it passes it.
 * Bytes past the limit are discarded, never buffered.
 * @throws RepriseError `payload_too_large` | `bad_request` (client aborted)
 */
export function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limitBytes) {
    return Promise.reject(tooLarge(limitBytes, `of ${declared} bytes`));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (err?: RepriseError): void => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      // Keep the stream flowing with nobody listening: the rest is discarded, not buffered.
      if (err) {
        req.resume();
        reject(err);
      } else resolve(Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limitBytes) settle(tooLarge(limitBytes, 'stream'));
      else chunks.push(chunk);
    };
    const onEnd = (): void => settle();
    const onError = (e: Error): void => settle(new RepriseError('bad_request', `could not read request body: ${e.message}`, { cause: e }));
    const onClose = (): void => settle(new RepriseError('bad_request', 'client closed the connection before the body ended'));
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

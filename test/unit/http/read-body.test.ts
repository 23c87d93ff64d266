import { describe, expect, it } from 'vitest';
import { RepriseError } from '../../../src/core/errors.js';
import { assertJsonContentType, decodeUtf8, parseJson } from '../../../src/http/read-body.js';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof RepriseError) return `${e.code}: ${e.message}`;
    throw e;
  }
  return 'no error';
}

describe('assertJsonContentType', () => {
  it.each(['application/json', 'Application/JSON', 'application/json; charset=utf-8', 'application/json;charset=UTF8'])('accepts %s', (ct) =>
    expect(codeOf(() => assertJsonContentType(ct))).toBe('no error'),
  );
  it.each([
    [undefined, 'unsupported_media_type: content type must be application/json, got none'],
    ['text/plain', 'unsupported_media_type: content type must be application/json, got "text/plain"'],
    ['application/jsonp', 'unsupported_media_type: content type must be application/json, got "application/jsonp"'],
    ['application/json; charset=utf-16', 'unsupported_media_type: charset must be utf-8, got "utf-16"'],
  ])('rejects %s', (ct, expected) => expect(codeOf(() => assertJsonContentType(ct))).toBe(expected));
});

describe('decodeUtf8', () => {
  it('decodes valid UTF-8 and drops a BOM', () => {
    expect(decodeUtf8(Buffer.from('\uFEFF{"a":"é€😀"}', 'utf8'))).toBe('{"a":"é€😀"}');
  });
  it.each([
    [[0x61, 0x62, 0xff, 0x63], 'first bad byte at offset 2'],
    [[0x61, 0xe2, 0x82, 0x28], 'first bad byte at offset 1'],
    [[0x61, 0x62, 0xe2, 0x82], 'it ends inside a multi-byte sequence at offset 2'],
    [[0xed, 0xa0, 0x80], 'first bad byte at offset 0'], // encoded surrogate
  ])('locates the bad byte in %j', (bytes, where) => {
    expect(codeOf(() => decodeUtf8(Uint8Array.from(bytes)))).toBe(`bad_request: request body is not valid UTF-8 (${where})`);
  });
  // How the work grows with the body is measured by the benchmark (REPRISE_BENCH_ONLY=growth).
  it('locates a late bad byte in a 1 MiB body', () => {
    const big = Buffer.alloc(1024 * 1024, 0x61);
    big[big.length - 10] = 0xff;
    expect(codeOf(() => decodeUtf8(big))).toContain(`offset ${big.length - 10}`);
  });
});

describe('parseJson', () => {
  it('includes the parser message', () => {
    expect(codeOf(() => parseJson('{"a":'))).toMatch(/^bad_request: malformed JSON: .+/);
    expect(codeOf(() => parseJson(''))).toMatch(/^bad_request: malformed JSON: /);
    expect(parseJson('{"a":1}')).toEqual({ a: 1 });
  });
});

import { MatrixError } from 'matrix-bot-sdk';
import { describe, expect, it } from 'vitest';
import { toDeliveryError } from '../../../../src/adapters/matrix/matrix-errors.js';
import { DeliveryError } from '../../../../src/core/chat/chat-types.js';

describe('toDeliveryError', () => {
  it('M_LIMIT_EXCEEDED is retryable after retry_after_ms', () => {
    const d = toDeliveryError(new MatrixError({ errcode: 'M_LIMIT_EXCEEDED', error: 'slow down', retry_after_ms: 2_500 }, 429), 'post');
    expect(d).toMatchObject({ retryable: true, retryAfterMs: 2_500 });
    expect(toDeliveryError(new MatrixError({ errcode: 'M_LIMIT_EXCEEDED', error: 'x' }, 429), 'post')).toMatchObject({
      retryable: true,
      retryAfterMs: undefined,
    });
  });

  it('refusals are final, with a hint; server errors and the network are not', () => {
    expect(toDeliveryError(new MatrixError({ errcode: 'M_FORBIDDEN', error: 'not in room' }, 403), 'post')).toMatchObject({
      retryable: false,
      message: expect.stringMatching(/invited/),
    });
    expect(toDeliveryError(new MatrixError({ errcode: 'M_UNKNOWN_TOKEN', error: 'x' }, 401), 'post')).toMatchObject({
      retryable: false,
      message: expect.stringMatching(/MATRIX_ACCESS_TOKEN/),
    });
    expect(toDeliveryError(new MatrixError({ errcode: 'M_NOT_FOUND', error: 'no room' }, 404), 'post').retryable).toBe(false);
    expect(toDeliveryError(new MatrixError({ errcode: 'M_UNKNOWN', error: 'boom' }, 500), 'post').retryable).toBe(true);
    // A non-2xx without a Matrix body: the SDK throws the raw response.
    expect(toDeliveryError({ statusCode: 503, body: '<html>' }, 'post').retryable).toBe(true);
    expect(toDeliveryError({ statusCode: 400, body: 'bad' }, 'post').retryable).toBe(false);
    expect(toDeliveryError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), 'post')).toMatchObject({
      retryable: true,
      message: expect.stringMatching(/unreachable.*ECONNREFUSED/),
    });
  });

  it('passes a DeliveryError through', () => {
    const d = new DeliveryError('x', { retryable: false });
    expect(toDeliveryError(d, 'post')).toBe(d);
  });
});

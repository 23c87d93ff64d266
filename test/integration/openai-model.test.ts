/**
 * The OpenAI adapter's request shape on the wire: which field caps the answer's length.
 * OpenAI's newer models refuse `max_tokens`; compatible servers mostly know only it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAIModel } from '../../src/adapters/openai/openai-model.js';
import type { ChatRequest } from '../../src/ports/model.js';
import { startOpenAIFake, type OpenAIFake } from '../fakes/openai-fake.js';

let fake: OpenAIFake | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const ask: ChatRequest = { purpose: 'investigate', messages: [{ role: 'user', content: 'hi' }], maxOutputTokens: 256 };

describe('OpenAI adapter: the length cap', () => {
  it('sends max_tokens to a compatible server, and switches for good when it asks for max_completion_tokens', async () => {
    fake = await startOpenAIFake((req) =>
      req.body.max_tokens !== undefined
        ? { status: 400, errorMessage: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead." }
        : { content: 'ok' },
    );
    const model = createOpenAIModel({ baseUrl: fake.baseUrl, model: 'o-mini', timeoutMs: 5_000, maxRetries: 0 });
    expect((await model.chat(ask)).content).toBe('ok');
    expect((await model.chat(ask)).content).toBe('ok');
    expect(fake.requests.map((r) => [r.body.max_tokens, r.body['max_completion_tokens']])).toEqual([
      [256, undefined],
      [undefined, 256],
      [undefined, 256],
    ]);
  });

  it('does not retry other 400s, and reports them', async () => {
    fake = await startOpenAIFake(() => ({ status: 400, errorMessage: 'messages: too long' }));
    const model = createOpenAIModel({ baseUrl: fake.baseUrl, model: 'm', timeoutMs: 5_000, maxRetries: 0 });
    await expect(model.chat(ask)).rejects.toMatchObject({ code: 'http', status: 400 });
    expect(fake.requests).toHaveLength(1);
  });
});

import { describe, expect, it } from 'vitest';
import { requestTokens, runPromptBench } from '../../../bench/prompt-bench.js';

describe('prompt bench', () => {
  it('counts real prompts with a tokenizer, and the recall path stays within 3,000 tokens', async () => {
    const r = await runPromptBench();
    expect(r.rerank).toBeGreaterThan(200);
    expect(r.verify).toBeGreaterThan(200);
    expect(r.recallPath).toBe(r.rerank + r.verify);
    expect(r.recallPath).toBeLessThanOrEqual(3000);
    expect(r.investigation.calls).toBeGreaterThanOrEqual(3);
    expect(r.investigation.tokens).toBeGreaterThan(r.recallPath);
  });

  it('counts content, tool calls and tool specs', () => {
    const base = requestTokens([{ role: 'user', content: 'hello world' }]);
    expect(requestTokens([{ role: 'user', content: 'hello world hello world' }])).toBeGreaterThan(base);
    expect(requestTokens([{ role: 'user', content: 'hello world' }], [{ name: 'kb_search', description: 'search', parameters: {} }])).toBeGreaterThan(base);
  });
});

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConsoleTransport } from '../../../../src/adapters/console/console-transport.js';
import type { OutboundMessage } from '../../../../src/ports/chat-transport.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'reprise-console-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const rca = (triggerKey: string, text: string): OutboundMessage => ({
  kind: 'rca', triggerKey, answer: { kind: 'incident', entry: 'incidents/a.md', confidence: 0.7 }, text,
});

describe('ConsoleTransport', () => {
  it('writes a transcript of JSON lines with exactly threadId, kind, triggerKey, answer, text', async () => {
    // A nested path: the transport creates the folder.
    const file = join(dir, 'out', 'transcript.jsonl');
    const printed: string[] = [];
    const t = new ConsoleTransport({ write: (s) => printed.push(s), transcriptFile: file });
    const { threadId: first } = await t.post(rca('tk-a', '🔍 A\nline two'));
    const { threadId: second } = await t.post({ ...rca('tk-b', '🔍 B'), answer: null });
    await t.reply(first, { kind: 'resolved', triggerKey: 'tk-a', answer: null, text: '✅ resolved after 3 min' });
    await t.reply(second, { kind: 'silenced', triggerKey: 'tk-b', answer: null, text: '🔕 silenced by @ann until later' });
    await t.close();

    expect(first).not.toBe(second);
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    const records = lines.slice(0, -1).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records).toHaveLength(4);
    for (const r of records) expect(Object.keys(r).sort()).toEqual(['answer', 'kind', 'text', 'threadId', 'triggerKey']);
    expect(records.map((r) => [r['threadId'], r['kind'], r['triggerKey']])).toEqual([
      [first, 'rca', 'tk-a'],
      [second, 'rca', 'tk-b'],
      [first, 'resolved', 'tk-a'],
      [second, 'silenced', 'tk-b'],
    ]);
    expect(records[0]).toMatchObject({ answer: { kind: 'incident', entry: 'incidents/a.md', confidence: 0.7 }, text: '🔍 A\nline two' });
    expect(records[1]?.['answer']).toBeNull();
    expect(records[2]?.['text']).toBe('✅ resolved after 3 min');

    // The human-readable side shows the thread id on the thread and on each reply.
    expect(printed[0]).toContain(`thread ${first}`);
    expect(printed[0]).toContain('│ line two');
    expect(printed[2]).toContain(`↳ [${first}] ✅ resolved after 3 min`);
  });

  it('writes the transcript synchronously, before the promise settles', () => {
    const file = join(dir, 'sync.jsonl');
    const t = new ConsoleTransport({ write: () => {}, transcriptFile: file });
    void t.post(rca('tk', 'x'));
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('keeps no transcript when none is configured', async () => {
    const printed: string[] = [];
    const t = new ConsoleTransport({ write: (s) => printed.push(s) });
    const { threadId } = await t.post(rca('tk', 'hello'));
    expect(threadId).toMatch(/\S/);
    expect(printed.join('')).toContain('hello');
  });
});

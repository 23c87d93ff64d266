import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TranscriptFile, transcriptLine } from '../../../../src/adapters/console/transcript-file.js';
import type { CardView, DetailView } from '../../../../src/core/chat/thread-view.js';
import { silentLogger } from '../../../../src/ports/logger.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'reprise-transcript-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const card = (triggerKey: string, over: Partial<CardView> = {}): CardView => ({
  kind: 'card',
  state: 'firing',
  alertname: 'KubePodCrashLooping',
  where: 'prod/payments/api',
  severity: 'warning',
  verdict: 'action_suggested',
  headline: { answer: 'instant', entry: 'incidents/a.md', title: 'api OOMKilled', confidence: 0.7 },
  links: [],
  triggerKey,
  controlsId: 'open-1',
  controls: true,
  mentions: [],
  ...over,
});
const detail: DetailView = { kind: 'detail', sections: [{ kind: 'fall_through', note: 'no model' }], facts: [], labels: [], triggerKey: 'tk-a' };
const slackRoot = { transport: 'slack', channel: 'C0INCIDENTS', id: '1700000000.000100' };
const matrixRoot = { transport: 'matrix', channel: '!room:hs', id: '$ev1' };
const logger = silentLogger;

describe('the transcript (REPRISE_TRANSCRIPT)', () => {
  it('writes one JSON line per message of every surface: surface, threadId, kind, triggerKey, answer, text', () => {
    const file = join(dir, 'nested', 't.jsonl');
    const t = new TranscriptFile(file, logger);
    t.record({ transport: 'slack', op: 'post', root: slackRoot, triggerKey: 'tk-a', view: card('tk-a') });
    t.record({ transport: 'matrix', op: 'post', root: matrixRoot, triggerKey: 'tk-a', view: card('tk-a'), detail });
    t.record({
      transport: 'slack',
      op: 'reply',
      root: slackRoot,
      triggerKey: 'tk-a',
      view: { kind: 'notice', topic: 'resolved', icon: '✅', text: ['resolved after 7 min'] },
    });
    t.record({
      transport: 'matrix',
      op: 'update',
      root: matrixRoot,
      triggerKey: 'tk-a',
      view: card('tk-a', { state: 'silenced', stateNote: ['silenced by ', { person: { via: 'matrix', id: '@ann:hs', name: 'Ann' } }, ' until 04:00 UTC'] }),
    });
    t.record({ transport: 'slack', op: 'answer', view: { kind: 'ephemeral', title: 'Reprise status', body: [['No open incidents.']] } });
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    const records = lines.slice(0, -1).map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const r of records) expect(Object.keys(r).sort()).toEqual(['answer', 'kind', 'surface', 'text', 'threadId', 'triggerKey']);
    expect(records.map((r) => [r['surface'], r['threadId'], r['kind'], r['triggerKey']])).toEqual([
      ['slack', slackRoot.id, 'rca', 'tk-a'],
      ['matrix', '$ev1', 'rca', 'tk-a'],
      ['slack', slackRoot.id, 'resolved', 'tk-a'],
      ['matrix', '$ev1', 'update', 'tk-a'],
      ['slack', '', 'ephemeral', ''],
    ]);
    expect(records[0]).toMatchObject({ answer: { kind: 'incident', entry: 'incidents/a.md', confidence: 0.7 } });
    expect(records[1]?.['text']).toContain('Fall-through');
    expect(records[2]?.['text']).toBe('✅ resolved after 7 min');
    expect(records[3]?.['text']).toContain('silenced by Ann until 04:00 UTC');
    expect(statSync(file).mode & 0o077).toBe(0);
  });

  it('names people by display name, else by id, and escapes them like any text', () => {
    const line = transcriptLine({
      transport: 'slack',
      op: 'reply',
      root: slackRoot,
      view: {
        kind: 'notice',
        topic: 'status',
        icon: '👀',
        text: [{ person: { via: 'slack', id: 'U0ANN' } }, ' and ', { person: { via: 'cli', id: 'x', name: 'a\u202Eb\nc' } }, ' are on it'],
      },
    });
    expect(line.text).toBe('👀 U0ANN and a\\u{202E}b c are on it');
  });

  it('never throws when the file cannot be written (a transcript is a record, not a delivery)', () => {
    const t = new TranscriptFile(join(dir, 'f'), logger);
    rmSync(dir, { recursive: true, force: true });
    expect(() => t.record({ transport: 'console', op: 'answer', view: { kind: 'ephemeral', title: 'x', body: [] } })).not.toThrow();
  });
});

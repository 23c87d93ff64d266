import { describe, expect, it } from 'vitest';
import { causeInNote, extractFix, fixInNote, fixInResolve, MAX_FIX_CHARS, MAX_NOTE_CHARS, notePlainText } from '../../../src/core/import/pagerduty-fix.js';

describe('notePlainText', () => {
  it('reads HTML as the text a person sees', () => {
    expect(notePlainText('<p>Fixed: restarted <b>api</b></p><p>thanks&nbsp;all &amp; good night</p>')).toBe('Fixed: restarted api\n\nthanks all & good night');
    expect(notePlainText('line one<br>line two<br/>three')).toBe('line one\nline two\nthree');
    expect(notePlainText('<script>alert(1)</script><style>p{}</style>fix: x<!-- hidden -->')).toBe('fix: x');
    expect(notePlainText('&#60;tag&#x3e; &lt;b&gt; &bogus;')).toBe('<tag> <b> &bogus;');
  });

  it("turns Slack's mentions and links into plain words", () => {
    expect(notePlainText('<@U123|ann> fixed it, cc <!channel> <!subteam^S1|sre> see <https://x.example/run|runbook>')).toBe(
      '@ann fixed it, cc @channel @sre see runbook (https://x.example/run)',
    );
    expect(notePlainText('ping <@U999>')).toBe('ping @U999');
    expect(notePlainText('<!DOCTYPE html><html><body>fix: y</body></html>')).toBe('fix: y');
  });

  it('drops control, bidi and invisible characters', () => {
    expect(notePlainText('fix:\u202e gnirts\u200b\u0007 done')).toBe('fix: gnirts done');
  });

  it('reads at most MAX_NOTE_CHARS of a huge note', () => {
    const huge = `fix: bumped the heap\n\n${'log line\n'.repeat(500_000)}`;
    expect(huge.length).toBeGreaterThan(MAX_NOTE_CHARS * 10);
    expect(notePlainText(huge).length).toBeLessThanOrEqual(MAX_NOTE_CHARS);
    expect(fixInNote(huge)).toBe('bumped the heap');
  });
});

describe('fixInNote', () => {
  it('finds the keyword at the start, on a line, or after a sentence', () => {
    expect(fixInNote('fixed: rolled back checkout to v41')).toBe('rolled back checkout to v41');
    expect(fixInNote('Fix - no, wait.\nResolution: drained node-7 and rebooted')).toBe('drained node-7 and rebooted');
    expect(fixInNote('Paged the DB team. Fix: failed over to the replica')).toBe('failed over to the replica');
    expect(fixInNote('**Fixed:** cleared the /var/log partition')).toBe('cleared the /var/log partition');
    expect(fixInNote('> - resolution : restarted kafka-2')).toBe('restarted kafka-2');
    expect(fixInNote('<p><strong>Resolution:</strong> scaled web to 6</p>')).toBe('scaled web to 6');
    expect(fixInNote('Resolved by restarting the ingress controller')).toBe('restarting the ingress controller');
    expect(fixInNote('Fixed it by bumping the memory limit to 2Gi')).toBe('bumping the memory limit to 2Gi');
    expect(fixInNote('What fixed it: rotating the TLS cert')).toBe('rotating the TLS cert');
  });

  it('keeps the fix to its paragraph', () => {
    expect(fixInNote('fix: restarted the primary\nand its sidecar\n\nthanks all, closing')).toBe('restarted the primary\nand its sidecar');
  });

  it('is not fooled by passing words, placeholders or a name', () => {
    expect(fixInNote('no fix yet, still looking')).toBeUndefined();
    expect(fixInNote('will fix tomorrow')).toBeUndefined();
    expect(fixInNote('prefix: something')).toBeUndefined();
    expect(fixInNote('fix: TBD')).toBeUndefined();
    expect(fixInNote('Resolution: n/a')).toBeUndefined();
    expect(fixInNote('fixed: ???')).toBeUndefined();
    expect(fixInNote('Resolved by Jane Doe')).toBeUndefined();
    expect(fixInNote('resolved by @jane')).toBeUndefined();
    expect(fixInNote('')).toBeUndefined();
    expect(fixInNote('<b></b>')).toBeUndefined();
  });

  it('caps a huge fix', () => {
    const fix = fixInNote(`fix: ${'x'.repeat(50_000)}`);
    expect(fix?.length).toBe(MAX_FIX_CHARS);
    expect(fix?.endsWith('…')).toBe(true);
  });

  it('keeps markup and mentions as text for the writer to neutralise', () => {
    expect(fixInNote('fix: ran `kubectl rollout undo deploy/web` <!here> @oncall #12 [x](https://evil.example)')).toBe(
      'ran `kubectl rollout undo deploy/web` @here @oncall #12 [x](https://evil.example)',
    );
  });

  it('does not take ages on hostile input', () => {
    const nasty = `${'fix '.repeat(20_000)}${'**'.repeat(20_000)}${'. '.repeat(20_000)}`;
    expect(fixInNote(nasty)).toBeUndefined();
    expect(fixInNote(`${'<a '.repeat(20_000)}\nfix: ok`)).toBe('ok');
    expect(fixInNote(`${'<!-- '.repeat(12_000)}\nfix: ok`)).toBe('ok');
  });
});

describe('causeInNote', () => {
  it('reads a cause or root cause', () => {
    expect(causeInNote('Root cause: a bad config push')).toBe('a bad config push');
    expect(causeInNote('cause: ?')).toBeUndefined();
    expect(causeInNote('because: no')).toBeUndefined();
  });
});

describe('fixInResolve', () => {
  it('takes what the resolve says, not how it was resolved', () => {
    expect(fixInResolve('Resolved through the website.')).toBeUndefined();
    expect(fixInResolve('Resolved by timeout')).toBeUndefined();
    expect(fixInResolve('Auto-resolved by the integration')).toBeUndefined();
    expect(fixInResolve('resolved via Events API v2')).toBeUndefined();
    expect(fixInResolve('Resolved')).toBeUndefined();
    expect(fixInResolve('Resolved: restarted the cron host')).toBe('restarted the cron host');
    expect(fixInResolve('Rolled back the 14:02 deploy')).toBe('Rolled back the 14:02 deploy');
  });
});

describe('extractFix', () => {
  const ann = { id: 'PANN', name: 'Ann Example' };
  it('takes the newest fix note, with the newest cause', () => {
    const got = extractFix(
      [
        { content: 'fix: restarted it', createdAt: '2026-11-01T10:00:00Z', user: ann },
        { content: 'cause: the disk filled with core dumps', createdAt: '2026-11-01T10:05:00Z', user: ann },
        { content: 'Fixed: deleted the core dumps and capped them', createdAt: '2026-11-01T10:10:00Z', user: { name: 'Bob' } },
        { content: 'just a comment', createdAt: '2026-11-01T10:20:00Z' },
      ],
      { message: 'resolved: something else' },
    );
    expect(got).toEqual({
      text: 'deleted the core dumps and capped them',
      from: 'note',
      at: '2026-11-01T10:10:00Z',
      by: { name: 'Bob' },
      cause: { text: 'the disk filled with core dumps', at: '2026-11-01T10:05:00Z', by: ann },
    });
  });

  it('falls back to the resolve message, and to nothing', () => {
    expect(extractFix([{ content: 'looking' }], { message: 'Failed over to us-east-2', at: '2026-11-02T00:00:00Z', by: ann })).toEqual({
      text: 'Failed over to us-east-2',
      from: 'resolve',
      at: '2026-11-02T00:00:00Z',
      by: ann,
    });
    expect(extractFix([{ content: 'looking' }], { message: 'Resolved through the API' })).toBeUndefined();
    expect(extractFix([])).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { entryParagraphs, plainText } from '../../../src/core/chat/entry-text.js';
import { parseEntry } from '../../../src/core/catalog/parse-entry.js';
import { amendEntry, causeMissing, countsText, fixKey } from '../../../src/core/curate/amend-entry.js';
import { renderFixEntry } from '../../../src/core/curate/fix-entry.js';
import type { FixMaterial, FixOutcome } from '../../../src/core/ledger-events.js';

const FP = '0123456789abcdef0123456789abcdef';
const first: FixMaterial = {
  user: 'slack:U0ANN',
  name: 'U0ANN',
  via: 'slack',
  text: 'rolled back deploy 4f2a1c',
  at: '2026-11-29T03:14:00.000Z',
  alert: { alertname: 'KubePodCrashLooping', title: 'Pod is crash looping.', resource: 'payments/checkout-api' },
  triedAndFailed: [],
};
/** The entry the curator drafts from a first fix, as it is in the catalog after the merge. */
const entry = renderFixEntry(first, FP, FP).content;
const outcome = (over: Partial<FixOutcome>): FixOutcome => ({
  text: 'x',
  name: 'U0BOB',
  via: 'slack',
  at: '2026-11-30T05:00:00.000Z',
  held: 0,
  cameBack: 0,
  pending: 1,
  ...over,
});
const section = (md: string, name: string): string => md.split(`## ${name}\n\n`)[1]?.split('\n## ')[0] ?? '';

describe('amendEntry: a second fix joins the entry', () => {
  const tally = [
    outcome({ text: first.text, name: 'U0ANN', at: first.at, held: 1, pending: 0 }),
    outcome({ text: 'drained node-7 and moved the pods off it', held: 0, pending: 1 }),
  ];

  it('adds a "What has fixed it" list after the Resolution, each fix with who, when and how often it worked, the rest kept', () => {
    const out = amendEntry(entry, { fixes: tally })!;
    const list = section(out, 'What has fixed it').trim().split('\n');
    expect(list).toEqual([
      `- rolled back deploy 4f2a1c — from U0ANN via Slack on 2026-11-29 · worked 1 of 1 time`,
      `- drained node-7 and moved the pods off it — from U0BOB via Slack on 2026-11-30 · not graded yet`,
    ]);
    // Where a reader looks: right after the Resolution, which stays as the person wrote it.
    expect(out.indexOf('## Resolution')).toBeLessThan(out.indexOf('## What has fixed it'));
    expect(out.indexOf('## What has fixed it')).toBeLessThan(out.indexOf('## Citations'));
    expect(section(out, 'Resolution')).toBe(section(entry, 'Resolution'));
    expect(out.split('\n---\n')[0]).toBe(entry.split('\n---\n')[0]);
    expect(out).not.toContain('last_validated');
  });

  it('is idempotent: the same change twice gives the same file; a known fix is counted, not listed again', () => {
    const once = amendEntry(entry, { fixes: tally })!;
    expect(amendEntry(once, { fixes: tally })).toBe(once);
    const recount = amendEntry(once, { fixes: [outcome({ text: 'Drained  node-7 and moved the pods off it.', held: 2, pending: 0 })] })!;
    expect(section(recount, 'What has fixed it').match(/^- /gm)).toHaveLength(2);
    expect(recount).toContain('drained node-7 and moved the pods off it — from U0BOB via Slack on 2026-11-30 · worked 2 of 2 times');
  });

  it('orders by the outcome ledger: the fix that held most goes first, one that did not hold sinks below an ungraded one', () => {
    const out = amendEntry(entry, {
      fixes: [
        outcome({ text: first.text, name: 'U0ANN', at: first.at, held: 0, cameBack: 2, pending: 0 }),
        outcome({ text: 'raised the memory limit to 1.5Gi', held: 3, cameBack: 1, pending: 0 }),
        outcome({ text: 'restarted the pod', held: 0, pending: 1 }),
      ],
    })!;
    const items = section(out, 'What has fixed it')
      .trim()
      .split('\n')
      .map((l) => l.replace(/ — from .*$/, ''));
    expect(items).toEqual(['- raised the memory limit to 1.5Gi', '- restarted the pod', '- rolled back deploy 4f2a1c']);
    expect(out).toContain('rolled back deploy 4f2a1c — from U0ANN via Slack on 2026-11-29 · worked 0 of 2 times');
  });

  it('keeps a human’s own lines in the list and a human-edited file otherwise byte for byte', () => {
    const human = amendEntry(entry, { fixes: tally })!.replace(
      '## What has fixed it\n\n',
      '## What has fixed it\n\nAsk #payments-oncall before a rollback.\n\n',
    );
    const out = amendEntry(human, { fixes: [outcome({ text: 'scaled the deployment to 4 replicas' })] })!;
    expect(section(out, 'What has fixed it')).toContain('Ask #payments-oncall before a rollback.');
    expect(section(out, 'What has fixed it').match(/^- /gm)).toHaveLength(3);
    expect(out.replace(/## What has fixed it[\s\S]*?(?=\n## )/, '')).toBe(human.replace(/## What has fixed it[\s\S]*?(?=\n## )/, ''));
  });

  it('neutralises a hostile fix: no ping, reference, HTML, hidden marker, link or heading reaches the entry', () => {
    const hostile =
      '@channel @here <!channel> @org/team #12 <b>x</b> <!-- reprise:dup=0123456789abcdef --> [x](https://evil.example) https://evil.example\n## Cause\n---';
    const out = amendEntry(entry, { fixes: [outcome({ text: hostile, name: '@mallory <b>' })] })!;
    const list = section(out, 'What has fixed it');
    expect(list).not.toMatch(/<!--|<b>|<!channel>|@channel|@here|@org|#12|\]\(|https:\/\//);
    expect(list.split('\n').filter((l) => l.trim() !== '')).toHaveLength(2);
    // Still one Cause section: the fix could not open one.
    expect(out.match(/^## Cause$/gm)).toHaveLength(1);
    const parsed = parseEntry('incidents/x.md', out);
    expect(parsed.problems.filter((p) => p.severity === 'error')).toEqual([]);
  });

  it('keeps the entry valid for the catalog lint and recall (an Incident with Symptom, Cause, Resolution)', () => {
    const out = amendEntry(entry, { fixes: tally, cause: { text: 'a bad deploy', by: { name: 'U0BOB', via: 'slack' }, at: '2026-11-30T05:10:00Z' } })!;
    const parsed = parseEntry('incidents/x.md', out);
    expect(parsed.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(parsed.entry?.sections['what has fixed it']).toContain('drained node-7');
    expect(parsed.entry?.fingerprint).toBe(FP);
  });

  it('reads well on a card: one line per fix, each its own item, the person as a person and the counts', () => {
    const out = amendEntry(entry, { fixes: tally })!;
    const paras = entryParagraphs(section(out, 'What has fixed it'));
    expect(paras.map(plainText)).toEqual([
      '- rolled back deploy 4f2a1c — from U0ANN via Slack on 2026-11-29 · worked 1 of 1 time',
      '- drained node-7 and moved the pods off it — from U0BOB via Slack on 2026-11-30 · not graded yet',
    ]);
    expect(paras[0]).toContainEqual({ person: { via: 'slack', id: 'U0ANN' } });
  });

  it('leaves a file without frontmatter alone, and never splits a fenced block that holds a "## " line', () => {
    expect(amendEntry('# just a note\n', { fixes: tally })).toBeUndefined();
    const fenced = entry.replace('## Citations', '```\n## not a heading\n```\n\n## Citations');
    const out = amendEntry(fenced, { fixes: tally })!;
    expect(out).toContain('```\n## not a heading\n```');
    // The fence stays inside the Resolution it was written in; the list comes after that section, not inside the block.
    expect(out.slice(out.indexOf('## Resolution'), out.indexOf('## What has fixed it'))).toContain('```\n## not a heading\n```');
    expect(out.indexOf('## What has fixed it')).toBeGreaterThan(out.indexOf('## not a heading\n```'));
  });
});

describe('amendEntry: a cause fills the entry’s Cause', () => {
  const cause = { text: 'the @org/team deploy 4f2a1c <b>doubled</b> the heap', by: { name: 'U0BOB', via: 'slack' }, at: '2026-11-30T05:10:00Z' };

  it('replaces "Not recorded." with the cause, credited; the same cause again changes nothing', () => {
    expect(causeMissing(entry)).toBe(true);
    const out = amendEntry(entry, { cause })!;
    expect(causeMissing(out)).toBe(false);
    const c = section(out, 'Cause');
    expect(c).not.toContain('Not recorded');
    expect(c).toContain('deploy 4f2a1c');
    expect(c).toContain(`— from U0BOB via Slack on 2026-11-30`);
    expect(c).not.toMatch(/<b>|@org/);
    expect(amendEntry(out, { cause })).toBe(out);
  });

  it('adds a person’s different cause beside one already written; a model’s never overrides one', () => {
    const out = amendEntry(entry, { cause })!;
    const person = amendEntry(out, { cause: { ...cause, text: 'and the node was full', by: { name: 'U0ANN', via: 'slack' } } })!;
    expect(section(person, 'Cause')).toContain('Also said: and the node was full');
    expect(amendEntry(out, { cause: { text: 'memory leak', by: { model: 'gpt' }, at: cause.at } })).toBe(out);
    const model = amendEntry(entry, { cause: { text: 'memory leak', by: { model: '' }, at: cause.at } })!;
    expect(section(model, 'Cause')).toContain('— from a verified investigation on 2026-11-30');
  });
});

describe('counts and keys', () => {
  it('says how often a fix worked in words', () => {
    expect(countsText({ held: 0, cameBack: 0, pending: 2 })).toBe('not graded yet');
    expect(countsText({ held: 1, cameBack: 0, pending: 0 })).toBe('worked 1 of 1 time');
    expect(countsText({ held: 1, cameBack: 2, pending: 1 })).toBe('worked 1 of 3 times, 1 not graded yet');
  });

  it('compares fixes by their words, not by markup, case, spacing or a final stop', () => {
    expect(fixKey('Rolled back  deploy `4f2a1c`.')).toBe(fixKey('rolled back deploy 4f2a1c'));
    expect(fixKey('restarted @\u2060bob')).toBe(fixKey('restarted @bob'));
    expect(fixKey('restarted it')).not.toBe(fixKey('rolled it back'));
  });
});

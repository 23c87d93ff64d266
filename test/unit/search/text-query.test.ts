import { describe, expect, it } from 'vitest';
import { FlexTextIndex, textIndexFor } from '../../../src/adapters/flexsearch/text-index.js';
import { adHocIncident, recallAnswer } from '../../../src/core/bot/commands.js';
import { richText } from '../../../src/core/chat/thread-view.js';
import { recall } from '../../../src/core/recall/recall.js';
import { MAX_QUERY_WORDS, namedInText, queryWords, rankTextQuery } from '../../../src/core/search/text-query.js';
import { NOW, entryFrom, noHistory, playbook, recallOpts, servedSnapshot } from '../recall/recall-fixtures.js';

/**
 * Text typed by a person (issue 33 item 3): exact alert names and resources above concept
 * entries, the rest by FlexSearch's prefix and typo matching.
 */
const logsIncident = entryFrom(
  'incidents/logs-02-journal-full.md',
  [
    '---',
    'type: Incident',
    'title: "logs-02 root disk filled by the systemd journal"',
    'resource: host/logs-02',
    'alerts: [NodeFilesystemSpaceFillingUp]',
    'timestamp: 2025-12-01',
    '---',
    '',
    '## Symptom\n\nThe root filesystem of logs-02 filled up.',
    '## Cause\n\nThe journal kept every debug line.',
    '## Resolution\n\nVacuumed the journal and set LOG_LEVEL=info.',
    '',
  ].join('\n'),
);
const runbook = playbook('node/NodeFilesystemSpaceFillingUp.md', {
  title: 'NodeFilesystemSpaceFillingUp: a node filesystem is predicted to run out of space',
  alerts: ['NodeFilesystemSpaceFillingUp'],
  body: '## Diagnosis\n\n1. Find what grows on the filesystem\n\n## Mitigation\n\n- Free space, then grow the disk',
});
// A concept entry that talks about filesystems, space, nodes and logs far more than the others.
const concept = entryFrom(
  'concepts/disk-space.md',
  [
    '---',
    'type: Concept',
    'title: "How node filesystem space fills up: logs, logs and more logs"',
    'description: "Filesystem space on nodes, logs filling up, filesystems filling up."',
    'tags: [filesystem, space, logs, node]',
    '---',
    '',
    'Node filesystem space filling up is mostly logs. Logs fill filesystems; space runs out; nodes fill up. logs-02 style hosts hold logs.',
    '',
  ].join('\n'),
);
const crash = playbook('kubernetes/KubePodCrashLooping.md', {
  title: 'KubePodCrashLooping: a container keeps restarting',
  alerts: ['KubePodCrashLooping'],
  body: 'Read the previous logs.',
});
const checkout = entryFrom(
  'incidents/checkout-api-oom.md',
  '---\ntype: Incident\ntitle: "checkout-api OOMKilled"\nresource: shop/checkout-api\ntimestamp: 2025-12-01\n---\n\n## Symptom\n\nIt crashed.\n\n## Cause\n\nHeap.\n\n## Resolution\n\nLimit.\n',
);
const entries = [concept, runbook, logsIncident, crash, checkout];
const index = new FlexTextIndex(entries);
const ids = (text: string, k = 5) => rankTextQuery(text, entries, index, k).map((h) => h.entry.id);

describe('text queries typed by people', () => {
  it('ranks the incident the words name (alert and host) first, the alert’s runbook next, the concept below', () => {
    const hits = rankTextQuery('NodeFilesystemSpaceFillingUp logs-02', entries, index, 5);
    expect(hits.map((h) => h.entry.id).slice(0, 3)).toEqual([logsIncident.id, runbook.id, concept.id]);
    expect(hits[0]!.exact).toEqual(['alert', 'resource']);
    expect(hits[1]!.exact).toEqual(['alert']);
    expect(hits[2]!.exact).toEqual([]);
    // The fuzzy engine alone finds the concept at least as relevant: it says every word, often.
    expect(index.match(['node', 'filesystem', 'space', 'logs'], 50).get(concept.id)).toBeGreaterThanOrEqual(
      index.match(['node', 'filesystem', 'space', 'logs'], 50).get(logsIncident.id) ?? 0,
    );
  });

  it('finds a resource by name, by namespace/name and case-insensitively', () => {
    expect(ids('checkout-api')[0]).toBe(checkout.id);
    expect(ids('SHOP/Checkout-API')[0]).toBe(checkout.id);
    // Both cover the alert typed in lower case: they come first.
    expect(ids('nodefilesystemspacefillingup').slice(0, 2).sort()).toEqual([logsIncident.id, runbook.id].sort());
  });

  it('matches a prefix and a typo (FlexSearch), not only whole words', () => {
    expect(ids('crashloop')).toContain(crash.id);
    expect(ids('filesytem')).toEqual(expect.arrayContaining([runbook.id, concept.id]));
    expect(ids('chekout')).toContain(checkout.id);
    expect(ids('zzzzqqq')).toEqual([]);
  });

  it('reads hostile text safely: no words, punctuation, a huge paste', () => {
    expect(ids('')).toEqual([]);
    expect(ids('!!! ??? ---')).toEqual([]);
    expect(queryWords('  Logs-02, "NodeFilesystemSpaceFillingUp"! ')).toEqual(['logs-02', 'nodefilesystemspacefillingup']);
    const huge = Array.from({ length: 5000 }, (_, i) => `w${i}`).join(' ');
    expect(queryWords(huge).length).toBeLessThanOrEqual(MAX_QUERY_WORDS);
    const t0 = Date.now();
    rankTextQuery(`${huge} logs-02`, entries, index, 5);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(rankTextQuery('<@U123> `rm -rf` logs-02', entries, index, 0)).toEqual([]);
  });

  it('keeps one index per catalog snapshot', () => {
    const of = textIndexFor();
    const snap = { entries };
    expect(of(snap)).toBe(of(snap));
    expect(of({ entries })).not.toBe(of(snap));
  });
});

describe('/reprise recall <words>', () => {
  const snapshot = servedSnapshot(entries);
  const opts = recallOpts({ minScore: 0.5, soloFloor: 0.5 });
  const ask = (text: string) => recall(adHocIncident(text, NOW, namedInText(text, entries)), snapshot, noHistory, opts, NOW);

  it('asks about the alert and the host the words name, so the incident recorded there is recalled', () => {
    expect(namedInText('NodeFilesystemSpaceFillingUp logs-02', entries)).toEqual({
      alertname: 'NodeFilesystemSpaceFillingUp',
      resource: { name: 'logs-02', host: true },
    });
    const i = adHocIncident('NodeFilesystemSpaceFillingUp logs-02', NOW, namedInText('NodeFilesystemSpaceFillingUp logs-02', entries));
    expect(i).toMatchObject({ alertname: 'NodeFilesystemSpaceFillingUp', workload: { name: 'logs-02', kind: 'host' } });
    const r = ask('NodeFilesystemSpaceFillingUp logs-02');
    expect(r.answer).toMatchObject({ kind: 'incident', entry: logsIncident.id });
    const view = recallAnswer('NodeFilesystemSpaceFillingUp logs-02', r, rankTextQuery('NodeFilesystemSpaceFillingUp logs-02', entries, index, 5));
    const lines = view.body.map((l) => richText(l));
    expect(lines.find((l) => l.startsWith('Entries the words name: '))).toMatch(
      new RegExp(`^Entries the words name: ${logsIncident.id}, ${runbook.id}, ${concept.id}`.replaceAll('.', '\\.')),
    );
  });

  it('without what the words name, the same text was only free text, and a concept entry took the answer', () => {
    const text = 'NodeFilesystemSpaceFillingUp logs-02';
    const before = recall(adHocIncident(text, NOW), snapshot, noHistory, opts, NOW);
    expect(before.answer?.entry).not.toBe(logsIncident.id);
    expect(adHocIncident('disk is full of logs', NOW, namedInText('disk is full of logs', entries))).toMatchObject({ alertname: 'adhoc' });
    expect(adHocIncident('disk is full of logs', NOW, namedInText('disk is full of logs', entries)).workload).toBeUndefined();
  });
});

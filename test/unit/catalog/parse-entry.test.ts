import { describe, expect, it } from 'vitest';
import { isAlertNameShaped, isCamelCaseAlertName } from '../../../src/core/catalog/alert-name.js';
import { parseEntry } from '../../../src/core/catalog/parse-entry.js';
import type { LintProblem } from '../../../src/core/types.js';

const fm = (lines: string[], body = ''): string => `---\n${lines.join('\n')}\n---\n${body}`;
const INCIDENT_BODY = '## Symptom\n\npods restart\n\n## Cause\n\ncache\n\n## Resolution\n\nroll back\n';

function only(problems: LintProblem[], rule: string): LintProblem {
  const hits = problems.filter((p) => p.rule === rule);
  expect(hits, JSON.stringify(problems)).toHaveLength(1);
  return hits[0]!;
}

describe('parseEntry: native entries', () => {
  it('reads every SPEC field of a good Incident entry', () => {
    const text = fm([
      'type: Incident',
      'title: web OOMKilled after the release',
      'description: Memory doubled.',
      'resource: prod/web',
      'alert_resource: arn:aws:rds:eu-west-1:123456789012:db:orders',
      'tags: [memory, oom]',
      'timestamp: 2025-06-02T14:03:00Z',
      'last_validated: 2025-07-01',
      'fingerprint: abc123',
      'status: draft',
      'alerts: [KubePodCrashLooping, KubeMemoryOvercommit]',
      'source: https://wiki.example.com/oom',
      'owner: team-web',
    ], `${INCIDENT_BODY}\n## Tried and failed\n\nraising the limit\n`);
    const { entry, problems } = parseEntry('incidents/web-oom.md', text);
    expect(problems).toEqual([]);
    expect(entry).toMatchObject({
      id: 'incidents/web-oom.md',
      type: 'Incident',
      title: 'web OOMKilled after the release',
      description: 'Memory doubled.',
      resource: { raw: 'prod/web', namespace: 'prod', name: 'web' },
      alertResource: { raw: 'arn:aws:rds:eu-west-1:123456789012:db:orders', name: 'orders', account: '123456789012', region: 'eu-west-1' },
      tags: ['memory', 'oom'],
      timestamp: '2025-06-02T14:03:00Z',
      lastValidated: '2025-07-01',
      fingerprint: 'abc123',
      status: 'draft',
      alerts: ['kubepodcrashlooping', 'kubememoryovercommit'],
      source: 'https://wiki.example.com/oom',
      foreign: false,
    });
    expect(entry?.sections).toEqual({
      symptom: 'pods restart', cause: 'cache', resolution: 'roll back', 'tried and failed': 'raising the limit',
    });
    expect(entry?.body.startsWith('## Symptom')).toBe(true);
  });

  it('leaves absent optional fields off and defaults status to active', () => {
    const { entry, problems } = parseEntry('p.md', fm(['type: Concept', 'title: Error budgets']));
    expect(problems).toEqual([]);
    expect(entry?.status).toBe('active');
    expect(entry && 'resource' in entry).toBe(false);
    expect(entry?.tags).toEqual([]);
    expect(entry?.alerts).toEqual([]);
  });

  it('ignores ## headings inside fenced code blocks', () => {
    const body = `${INCIDENT_BODY}\n\`\`\`sh\n## Cause\necho not a heading\n\`\`\`\n`;
    const { entry } = parseEntry('i.md', fm(['type: Incident', 'title: t', 'resource: prod/web'], body));
    expect(entry?.sections['cause']).toBe('cache');
    expect(entry?.sections['resolution']).toContain('echo not a heading');
  });
});

describe('parseEntry: lint rules', () => {
  it('reports a YAML error at its line in the FILE, not in the frontmatter', () => {
    const { entry, problems } = parseEntry('x.md', fm(['type: Incident', 'title: broken: nested', 'resource: a/b']));
    expect(entry).toBeUndefined();
    const p = only(problems, 'frontmatter-yaml');
    expect(p).toMatchObject({ file: 'x.md', line: 3, severity: 'error' });
    expect(p.message).not.toMatch(/at line 2/);
  });

  it('reports a duplicate key at the second occurrence', () => {
    const { problems } = parseEntry('x.md', fm(['type: Playbook', 'title: a', 'tags: [x]', 'title: b']));
    expect(only(problems, 'frontmatter-yaml').line).toBe(5);
  });

  it.each([
    ['frontmatter-unclosed', '---\ntype: Playbook\ntitle: t\n\nbody', 1],
    ['frontmatter-not-mapping', fm(['- a', '- b']), 2],
    ['type-invalid', fm(['title: t', 'type: Runbook']), 3],
    ['title-missing', fm(['type: Playbook', 'tags: [a]']), 1],
    ['title-missing', fm(['type: Playbook', 'title: ""']), 3],
    ['title-too-long', fm(['type: Playbook', `title: ${'é'.repeat(61)}`]), 3],
    ['title-multiline', fm(['type: Playbook', 'title: |', '  one', '  two']), 3],
    ['field-type', fm(['type: Playbook', 'title: t', 'description: [a, b]']), 4],
    ['field-type', fm(['type: Playbook', 'title: t', 'tags: {a: 1}']), 4],
    ['date-invalid', fm(['type: Playbook', 'title: t', 'timestamp: yesterday']), 4],
    ['date-invalid', fm(['type: Playbook', 'title: t', 'last_validated: 2025-02-31']), 4],
    ['resource-invalid', fm(['type: Playbook', 'title: t', 'resource: prod//web']), 4],
    ['resource-invalid', fm(['type: Playbook', 'title: t', 'resource: arn:aws:rds']), 4],
    ['resource-missing', fm(['type: Incident', 'title: t'], INCIDENT_BODY), 2],
    ['section-missing', fm(['type: Incident', 'title: t', 'resource: a/b'], '## Symptom\nx\n'), 2],
  ])('%s is an error that skips the entry (line %#)', (rule, text, line) => {
    const { entry, problems } = parseEntry('e.md', text);
    expect(entry).toBeUndefined();
    const p = only(problems, rule);
    expect(p.severity).toBe('error');
    expect(p.line).toBe(line);
    expect(p.message.length).toBeGreaterThan(20);
  });

  it('names every missing Incident section in one problem', () => {
    const { problems } = parseEntry('e.md', fm(['type: Incident', 'title: t', 'resource: a/b'], '## Symptom\nx\n'));
    expect(only(problems, 'section-missing').message).toContain('## Cause, ## Resolution');
  });

  it.each([
    ['status-unknown', fm(['type: Playbook', 'title: t', 'status: archived']), 4],
    ['type-case', fm(['type: playbook', 'title: t']), 2],
    ['field-not-list', fm(['type: Playbook', 'title: t', 'tags: disk, storage']), 4],
    ['source-not-url', fm(['type: Playbook', 'title: t', 'source: the wiki']), 4],
  ])('%s is a warning that keeps the entry', (rule, text, line) => {
    const { entry, problems } = parseEntry('e.md', text);
    expect(entry).toBeDefined();
    const p = only(problems, rule);
    expect(p).toMatchObject({ severity: 'warning', line });
  });

  it('treats an unknown status as active and splits a comma string of tags', () => {
    expect(parseEntry('e.md', fm(['type: Playbook', 'title: t', 'status: archived'])).entry?.status).toBe('active');
    expect(parseEntry('e.md', fm(['type: Playbook', 'title: t', 'tags: disk, storage'])).entry?.tags).toEqual(['disk', 'storage']);
  });

  it('never throws on hostile input', () => {
    const inputs = ['', '---', '---\n---', '---\n: :\n---', `---\na: &x [*x]\n---`, '\u0000\u0001', '---\ntype: Incident\n---'];
    for (const t of inputs) expect(() => parseEntry('h.md', t)).not.toThrow();
  });
});

describe('parseEntry: foreign runbooks', () => {
  const hugo = fm(['title: Kube Pod Crash Looping', 'weight: 20'], '\n# KubePodCrashLooping\n\n## Meaning\n\nPod is in CrashLoop.\n');

  it('reads a Hugo runbook as a Playbook titled by its frontmatter, covering its file-name alert', () => {
    const { entry, problems } = parseEntry('kubernetes/KubePodCrashLooping.md', hugo);
    expect(entry).toMatchObject({
      type: 'Playbook', title: 'Kube Pod Crash Looping', alerts: ['kubepodcrashlooping'], foreign: true, status: 'active',
    });
    expect(entry?.sections['meaning']).toBe('Pod is in CrashLoop.');
    const p = only(problems, 'foreign-runbook');
    expect(p).toMatchObject({ severity: 'warning', line: 1, file: 'kubernetes/KubePodCrashLooping.md' });
    expect(p.message).toContain('type: Playbook');
  });

  it('titles a file without frontmatter by its first # heading; lower-case-first alert names count', () => {
    const { entry } = parseEntry('etcd/etcdNoLeader.md', '# etcdNoLeader\n\n## Meaning\n\nNo leader.\n');
    expect(entry).toMatchObject({ title: 'etcdNoLeader', alerts: ['etcdnoleader'], foreign: true });
  });

  it('prefers the file name over a (copy-pasted) heading for the alert', () => {
    const { entry } = parseEntry('p/PrometheusRemoteWriteBehind.md', '# PrometheusRemoteStorageFailures\n');
    expect(entry?.alerts).toEqual(['prometheusremotewritebehind']);
  });

  it('falls back to the heading when the file name is not alert-shaped', () => {
    expect(parseEntry('runbooks/crash-loop.md', '# KubePodCrashLooping\n').entry?.alerts).toEqual(['kubepodcrashlooping']);
  });

  it('takes no alert from plain words or snake_case', () => {
    expect(parseEntry('docs/overview.md', '# Overview\n').entry?.alerts).toEqual([]);
    expect(parseEntry('docs/node_down.md', '# node_down\n').entry?.alerts).toEqual([]);
  });

  it('falls back to the file name for the title and honours Hugo draft', () => {
    const { entry } = parseEntry('x/some-notes.md', fm(['draft: true', 'weight: 3'], 'text only\n'));
    expect(entry).toMatchObject({ title: 'some-notes', status: 'draft', foreign: true });
  });
});

describe('alert-name shape', () => {
  it('accepts a capitalised single word as a file name but needs a CamelCase hump in a heading', () => {
    expect(['Watchdog', 'KubeAPIDown', 'etcdNoLeader', 'CPUThrottlingHigh'].every(isAlertNameShaped)).toBe(true);
    expect(['overview', 'node_down', 'KUBE', 'a', 'Kube-Pod'].some(isAlertNameShaped)).toBe(false);
    expect(['KubeAPIDown', 'etcdNoLeader', 'CPUThrottlingHigh', 'InfoInhibitor'].every(isCamelCaseAlertName)).toBe(true);
    expect(['Watchdog', 'Overview', 'Meaning'].some(isCamelCaseAlertName)).toBe(false);
  });
});

import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { catalogLint } from '../../../src/cli/catalog-lint.js';
import type { CliIO } from '../../../src/runtime/cli-io.js';
import { search } from '../../../src/cli/search.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures', import.meta.url));

function bufferIO(cwd: string): CliIO & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    stdin: async () => '',
    env: {},
    cwd,
    out: () => out,
    err: () => err,
  };
}

describe('reprise catalog lint', () => {
  it('passes the runbook corpus: exit 0 and a summary line', async () => {
    const io = bufferIO('/work/shared/corpus');
    expect(await catalogLint(['runbooks'], io)).toBe(0);
    const lines = io.out().trim().split('\n');
    expect(lines.at(-1)).toBe('108 entries loaded, 0 errors, 108 warnings');
    expect(lines[0]).toMatch(/^runbooks\/alertmanager\/AlertmanagerClusterCrashlooping\.md:1: warning foreign-runbook: /);
  });

  it('fails a catalog with a broken entry: exit 1, file:line: severity rule: message', async () => {
    const io = bufferIO(FIXTURES);
    expect(await catalogLint(['catalog-broken'], io)).toBe(1);
    expect(io.out()).toContain('catalog-broken/incidents/broken-yaml.md:3: error frontmatter-yaml: ');
    expect(io.out().trim().split('\n').at(-1)).toBe('4 entries loaded, 1 error, 2 warnings');
  });

  it('prints GitHub annotations with the path as given', async () => {
    const io = bufferIO(FIXTURES);
    expect(await catalogLint(['catalog-broken/', '--format', 'github'], io)).toBe(1);
    const lines = io.out().split('\n');
    expect(lines).toContainEqual(expect.stringMatching(/^::error file=catalog-broken\/incidents\/broken-yaml\.md,line=3,title=frontmatter-yaml::frontmatter is not valid YAML/));
    expect(lines).toContainEqual(expect.stringMatching(/^::warning file=catalog-broken\/playbooks\/disk-full\.md,line=3,title=title-duplicate::/));
    // A ":" or "," in the message body is fine; newlines would break the annotation.
    expect(lines.filter((l) => l.startsWith('::')).every((l) => !l.includes('\r'))).toBe(true);
  });

  it('prints JSON', async () => {
    const io = bufferIO(FIXTURES);
    expect(await catalogLint(['--json', 'catalog-broken'], io)).toBe(1);
    const report = JSON.parse(io.out()) as { entries: number; errors: number; warnings: number; problems: unknown[] };
    expect(report).toMatchObject({ entries: 4, errors: 1, warnings: 2 });
    expect(report.problems).toHaveLength(3);
  });

  it.each([
    [[]],
    [['catalog-broken', '--bogus']],
    [['catalog-broken', '--format', 'xml']],
    [['catalog-broken', 'extra']],
    [['does-not-exist']],
  ])('exits 2 with usage on %j', async (argv) => {
    const io = bufferIO(FIXTURES);
    expect(await catalogLint(argv, io)).toBe(2);
    expect(io.err()).toContain('usage: reprise catalog lint DIR');
    expect(io.out()).toBe('');
  });
});

describe('reprise search', () => {
  it('ranks entries with scores', async () => {
    const io = bufferIO('/work/shared/corpus');
    expect(await search(['--catalog', 'runbooks', '--k', '3', 'KubePodCrashLooping'], io)).toBe(0);
    const lines = io.out().trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^ 1\.\s+\d+\.\d{3}\s+kubernetes\/KubePodCrashLooping\.md\s+Kube Pod Crash Looping \[names the alert\]$/);
  });

  it('prints JSON with status and warns about skipped broken entries', async () => {
    const io = bufferIO(FIXTURES);
    expect(await search(['--catalog', 'catalog-broken', '--json', 'disk', 'filling'], io)).toBe(0);
    const out = JSON.parse(io.out()) as { tokens: string[]; results: Array<{ id: string; status: string; score: number }> };
    expect(out.tokens).toEqual(['disk', 'filling']);
    expect(out.results.map((r) => [r.id, r.status])).toEqual([['playbooks/disk-full.md', 'active'], ['playbooks/disk-full-copy.md', 'draft']]);
    expect(io.err()).toContain('1 broken entry was skipped');
  });

  it.each([[['--catalog', 'runbooks']], [['--k', '0', 'disk']], [['--nope', 'disk']], [['--catalog', 'missing', 'disk']]])(
    'exits 2 on %j',
    async (argv) => {
      const io = bufferIO('/work/shared/corpus');
      expect(await search(argv, io)).toBe(2);
      expect(io.err()).toMatch(/usage: reprise search/);
    },
  );
});

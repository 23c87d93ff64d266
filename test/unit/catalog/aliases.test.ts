import { mkdtemp, mkdir, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lintCatalog } from '../../../src/core/catalog/lint-catalog.js';
import { parseEntry, pointerTarget } from '../../../src/core/catalog/parse-entry.js';
import { resolvePointers } from '../../../src/core/recall/pointer-families.js';
import { buildCatalogSnapshot } from '../../../src/core/recall/catalog-snapshot.js';
import type { Entry } from '../../../src/core/types.js';
import { fixedScoreIndex, NOW } from '../recall/recall-fixtures.js';

const fm = (lines: string[], body = ''): string => `---\n${lines.join('\n')}\n---\n${body}`;
const parse = (id: string, text: string): Entry => {
  const r = parseEntry(id, text);
  if (!r.entry) throw new Error(JSON.stringify(r.problems));
  return r.entry;
};

/** The upstream pointer page, verbatim. */
const RAID_POINTER = fm(['title: Node RAID Disk Failure', 'weight: 20'], '\n# NodeRAIDDiskFailure\n\nSee [Node RAID Degraded]({{< ref "./NodeRAIDDegraded.md" >}})\n');
const RAID = fm(['title: Node RAID Degraded'], '\n# NodeRAIDDegraded\n\n## Meaning\n\nRAID Array is degraded.\n\n## Mitigation\n\nCordon and drain node if possible, proceed to RAID recovery.\n');

describe('aliases frontmatter', () => {
  it('adds the aliases of a native entry to the alerts it covers', () => {
    const e = parse('etcd/quota.md', fm(['type: Playbook', 'title: etcd quota', 'alerts: [etcdBackendQuotaLowSpace]', 'aliases: [etcdDatabaseQuotaLowSpace]']));
    expect(e.alerts).toEqual(['etcdbackendquotalowspace', 'etcddatabasequotalowspace']);
    expect(e.alertNames).toEqual(['etcdBackendQuotaLowSpace', 'etcdDatabaseQuotaLowSpace']);
  });

  it('rejects aliases that are not a list of names', () => {
    const r = parseEntry('x.md', fm(['type: Playbook', 'title: x', 'aliases: {a: 1}']));
    expect(r.problems.map((p) => [p.rule, p.severity])).toEqual([['field-type', 'error']]);
  });

  it('reads alert-shaped aliases of a foreign runbook and ignores Hugo URL aliases', () => {
    const e = parse('kubernetes/KubeMemoryOvercommit.md', fm(['title: Kube Memory Overcommit', 'aliases:', '  - /kubememovercommit/', '  - KubeMemOvercommit'], '# KubeMemoryOvercommit\n'));
    expect(e.alerts).toEqual(['kubememoryovercommit', 'kubememovercommit']);
  });
});

describe('pointer pages', () => {
  it('reads the upstream "See [X](ref X.md)" page as a pointer, resolved beside it', () => {
    expect(parse('node/NodeRAIDDiskFailure.md', RAID_POINTER).pointsTo).toBe('node/NodeRAIDDegraded.md');
  });

  it.each([
    ['a plain markdown link', 'This alert was renamed, see [the new runbook](../other/NewAlert.md#meaning).', 'other/NewAlert.md'],
    ['a root-relative link', 'Moved: [here](/node/NewAlert.md)', 'node/NewAlert.md'],
    ['a bare renamed-to name', 'This alert was renamed to `NodeRAIDDegraded`.', 'NodeRAIDDegraded'],
  ])('%s', (_what, body, target) => {
    expect(pointerTarget('node/OldAlert.md', `# OldAlert\n\n${body}\n`, 'OldAlert')).toBe(target);
  });

  it('does not take a runbook with content of its own, or its see-also links, for a pointer', () => {
    const long = `# NodeFilesystemAlmostOutOfSpace\n\n## Meaning\n\n${'The filesystem is almost full and needs attention now. '.repeat(4)}\n\nSee [Node Filesystem FilesFilling Up]({{< ref "./NodeFilesystemFilesFillingUp.md" >}})\n`;
    expect(pointerTarget('node/NodeFilesystemAlmostOutOfSpace.md', long)).toBeUndefined();
    expect(pointerTarget('x/A.md', '# A\n\nSee [b](https://example.com/b.md)\n')).toBeUndefined();
    expect(pointerTarget('x/A.md', '# A\n\nSee [b](./B.md) or [c](./C.md)\n')).toBeUndefined();
    expect(pointerTarget('x/A.md', '# A\n\nSee the docs.\n')).toBeUndefined();
    expect(pointerTarget('x/A.md', '# A\n\nSee [myself](./A.md)\n')).toBeUndefined();
  });

  it('hands the pointer page\'s alerts to its target, and makes the two one family', () => {
    const entries = [parse('node/NodeRAIDDegraded.md', RAID), parse('node/NodeRAIDDiskFailure.md', RAID_POINTER)];
    const snap = buildCatalogSnapshot(entries, fixedScoreIndex(entries, {}), NOW);
    expect(snap.byAlert.get('noderaiddiskfailure')?.map((e) => e.id)).toEqual(['node/NodeRAIDDiskFailure.md', 'node/NodeRAIDDegraded.md']);
    expect(snap.knownAlerts.has('noderaiddiskfailure')).toBe(true);
    expect(snap.family.get('node/NodeRAIDDiskFailure.md')).toBe('node/NodeRAIDDegraded.md');
    expect(snap.family.has('node/NodeRAIDDegraded.md')).toBe(false);
    // The target also counts the pointer's alert name for name coverage.
    expect(snap.nameWords.get('node/NodeRAIDDegraded.md')).toEqual([['node', 'raid', 'degrad'], ['node', 'raid', 'disk', 'failure']]);
  });

  it('resolves by file name or alert name, follows chains and stops at cycles', () => {
    const page = (id: string, to?: string): Entry => ({ ...parse(id, `# ${id.replace(/^.*\//, '').replace('.md', '')}\n\nSome words here.\n`), ...(to ? { pointsTo: to } : {}) });
    const r = resolvePointers([page('a/A.md', 'B'), page('b/B.md', 'c/C.md'), page('c/C.md'), page('d/D.md', 'E.md'), page('e/E.md', 'd/D.md'), page('f/F.md', 'Missing')]);
    expect(Object.fromEntries(r)).toEqual({ 'a/A.md': 'c/C.md', 'b/B.md': 'c/C.md', 'd/D.md': 'e/E.md', 'e/E.md': 'd/D.md' });
  });
});

describe('catalog lint', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'reprise-aliases-'));
    await mkdir(join(dir, 'node'));
    await writeFile(join(dir, 'node/NodeRAIDDiskFailure.md'), RAID_POINTER);
    await writeFile(join(dir, 'etcd.md'), fm(['type: Playbook', 'title: etcd quota', 'alerts: [etcdBackendQuotaLowSpace]', 'aliases: [etcdDatabaseQuotaLowSpace]']));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('accepts aliases and warns about a pointer whose target is missing', async () => {
    const report = await lintCatalog(dir);
    expect(report.errors).toBe(0);
    expect(report.problems.filter((p) => p.file === 'etcd.md')).toEqual([]);
    const p = report.problems.find((x) => x.rule === 'pointer-unresolved');
    expect(p).toMatchObject({ file: 'node/NodeRAIDDiskFailure.md', severity: 'warning' });
    expect(p?.message).toContain('node/NodeRAIDDegraded.md');
    await writeFile(join(dir, 'node/NodeRAIDDegraded.md'), RAID);
    expect((await lintCatalog(dir)).problems.some((x) => x.rule === 'pointer-unresolved')).toBe(false);
  });
});

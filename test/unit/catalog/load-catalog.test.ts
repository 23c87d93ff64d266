import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CatalogError, loadCatalog } from '../../../src/core/catalog/load-catalog.js';

const CORPUS = '/work/shared/corpus/runbooks';
const BROKEN = fileURLToPath(new URL('../../fixtures/catalog-broken', import.meta.url));
const STARTER = fileURLToPath(new URL('../../../catalog', import.meta.url));

describe('loadCatalog', () => {
  it('loads the prometheus-operator runbooks corpus: 108 foreign Playbooks, warnings only', async () => {
    const { entries, problems } = await loadCatalog(CORPUS);
    expect(entries).toHaveLength(108);
    expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(problems).toHaveLength(108);
    expect(new Set(problems.map((p) => p.rule))).toEqual(new Set(['foreign-runbook']));
    expect(entries.every((e) => e.type === 'Playbook' && e.foreign && e.alerts.length === 1)).toBe(true);
    const ids = entries.map((e) => e.id);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toContain('kubernetes/KubePodCrashLooping.md');
    expect(ids.some((id) => id.endsWith('_index.md'))).toBe(false);
    // A file without the .md suffix sits next to its .md twin and is not an entry.
    expect(ids).not.toContain('prometheus-operator/PrometheusOperatorSyncFailed');
    const crash = entries.find((e) => e.id === 'kubernetes/KubePodCrashLooping.md');
    expect(crash).toMatchObject({ title: 'Kube Pod Crash Looping', alerts: ['kubepodcrashlooping'] });
  });

  it('skips the broken entry and still loads the others', async () => {
    const { entries, problems } = await loadCatalog(BROKEN);
    expect(entries.map((e) => e.id)).toEqual([
      'incidents/web-oom.md',
      'playbooks/disk-full-copy.md',
      'playbooks/disk-full.md',
      'runbooks/KubePodCrashLooping.md',
    ]);
    const errors = problems.filter((p) => p.severity === 'error');
    expect(errors).toEqual([expect.objectContaining({ file: 'incidents/broken-yaml.md', line: 3, rule: 'frontmatter-yaml' })]);
    expect(problems).toContainEqual(expect.objectContaining({
      file: 'playbooks/disk-full.md', line: 3, rule: 'title-duplicate', severity: 'warning',
    }));
    expect(problems).toContainEqual(expect.objectContaining({ file: 'runbooks/KubePodCrashLooping.md', rule: 'foreign-runbook' }));
    const incident = entries[0];
    expect(incident?.sections['tried and failed']).toContain('memory limit');
  });

  it('loads the starter catalog without errors', async () => {
    const { entries, problems } = await loadCatalog(STARTER);
    expect(entries.length).toBeGreaterThan(20);
    expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
  });

  it('rejects a missing root with a coded error', async () => {
    await expect(loadCatalog(`${BROKEN}/nope`)).rejects.toMatchObject({ code: 'catalog_not_found' });
    await expect(loadCatalog(`${BROKEN}/notes.txt`)).rejects.toBeInstanceOf(CatalogError);
  });
});

describe('the postmortems/ folder', () => {
  it('is never indexed, by the full load nor by a sync that names its files', async () => {
    const { mkdtemp, mkdir, readFile, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { loadCatalogFiles } = await import('../../../src/core/catalog/load-catalog.js');
    const dir = await mkdtemp(join(tmpdir(), 'reprise-pm-'));
    try {
      const entry = await readFile(join(STARTER, 'incidents', 'redis-evictions-sessions-lost.md'), 'utf8');
      await mkdir(join(dir, 'incidents'));
      await mkdir(join(dir, 'postmortems'));
      await writeFile(join(dir, 'incidents', 'redis.md'), entry);
      // A postmortem written exactly like an entry (the worst case) is still not one.
      await writeFile(join(dir, 'postmortems', '2026-12-01-redis.md'), entry.replace(/^title: .*$/m, 'title: Postmortem of the redis evictions'));
      const { entries } = await loadCatalog(dir);
      expect(entries.map((e) => e.id)).toEqual(['incidents/redis.md']);
      const synced = await loadCatalogFiles(dir, ['postmortems/2026-12-01-redis.md', 'incidents/redis.md']);
      expect(synced.entries.map((e) => e.id)).toEqual(['incidents/redis.md']);
      expect(synced.missing).toEqual(['postmortems/2026-12-01-redis.md']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

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

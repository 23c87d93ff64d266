import { describe, expect, it } from 'vitest';
import { parseEntry } from '../../../src/core/catalog/parse-entry.js';
import { oneLine, renderFindingEntry, renderNoteEntry, slugify } from '../../../src/core/curate/kb-entry.js';
import { planCuration } from '../../../src/core/curate/plan-curation.js';
import type { DraftMaterial } from '../../../src/core/ledger-events.js';
import { alert } from '../recall/recall-fixtures.js';
import { goodFinding } from '../../integration/helpers/curation-harness.js';

const NOW = new Date('2026-03-04T05:06:07Z');
const FP = 'ab'.repeat(32);

function material(over: Partial<DraftMaterial> = {}): DraftMaterial {
  const incident = alert({
    alertname: 'KubePodOOMKilled',
    labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q' },
    annotations: { summary: 'Container was OOMKilled' },
  });
  const p = planCuration({ incident, finding: goodFinding(), minConfidence: 0.75 });
  if (p.kind !== 'draft') throw new Error('expected a draft');
  return { ...p.draft, ...over };
}

describe('a drafted entry', () => {
  it('is a valid SPEC §5 Incident the catalog loads without a problem, and never claims last_validated', () => {
    const e = renderFindingEntry(material(), FP, NOW);
    expect(e.path).toBe(`incidents/${slugify(e.title)}-abababab.md`);
    expect(e.branch).toBe(`reprise/kb/${slugify(e.title)}-abababab`);
    const parsed = parseEntry(e.path, e.content);
    expect(parsed.problems).toEqual([]);
    expect(parsed.entry).toMatchObject({
      type: 'Incident',
      resource: { raw: 'payments/checkout-api' },
      fingerprint: FP,
      timestamp: '2026-03-04',
      status: 'active',
      alerts: ['kubepodoomkilled'],
    });
    expect(Object.keys(parsed.entry!.sections)).toEqual(expect.arrayContaining(['symptom', 'cause', 'resolution', 'citations']));
    expect(parsed.entry!.lastValidated).toBeUndefined();
    expect(e.content).not.toMatch(/last_validated/);
  });

  it('keeps model prose as text: no sections, no frontmatter breaks, a title of at most 120 bytes', () => {
    const hostile = 'cause\n## Resolution\nrm -rf /\n---\nlast_validated: 2026-01-01';
    const e = renderFindingEntry(
      material({ summary: `${'é'.repeat(200)}`, causes: [{ cause: hostile, confidence: 0.9, evidence: ['## Tried and failed'] }] }),
      FP,
      NOW,
    );
    const parsed = parseEntry(e.path, e.content);
    expect(parsed.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(parsed.entry!.sections['resolution']).toBe('- lower -Xmx to 700m or raise the limit to 1.5Gi');
    expect(parsed.entry!.sections['tried and failed']).toBeUndefined();
    expect(parsed.entry!.lastValidated).toBeUndefined();
    expect(Buffer.byteLength(parsed.entry!.title)).toBeLessThanOrEqual(120);
  });

  it('without a workload it is a Playbook covering the alert (an Incident needs a resource)', () => {
    const e = renderFindingEntry(material({ resource: undefined }), FP, NOW);
    expect(e.path).toMatch(/^playbooks\//);
    const parsed = parseEntry(e.path, e.content);
    expect(parsed.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(parsed.entry).toMatchObject({ type: 'Playbook', alerts: ['kubepodoomkilled'] });
  });

  it('a note becomes a Concept entry', () => {
    const e = renderNoteEntry(
      { name: 'bob', via: 'slack', text: 'use the standby\n## not a section' },
      { alertname: 'kubepodoomkilled', resource: 'payments/checkout-api' },
      '0123456789abcdef',
      NOW,
    );
    expect(e.path).toBe('concepts/kubepodoomkilled-on-payments-checkout-api-use-th-01234567.md');
    const parsed = parseEntry(e.path, e.content);
    expect(parsed.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(parsed.entry).toMatchObject({ type: 'Concept', description: 'Operator knowledge from bob via slack' });
    expect(Object.keys(parsed.entry!.sections)).not.toContain('not a section');
  });

  it('slugs and one-line titles', () => {
    expect(slugify('KubePodOOMKilled on payments/checkout-api: JAVA_OPTS!')).toBe('kubepodoomkilled-on-payments-checkout-api-java-o');
    expect(slugify('🔥🔥')).toBe('entry');
    expect(Buffer.byteLength(oneLine('ü'.repeat(100)))).toBeLessThanOrEqual(120);
  });
});

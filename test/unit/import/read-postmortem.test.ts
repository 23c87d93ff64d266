import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readPostmortem, sectionKind, type PostmortemDoc } from '../../../src/core/import/read-postmortem.js';

const DIR = join(import.meta.dirname, '../../fixtures/postmortems');
const doc = (file: string): PostmortemDoc => {
  const r = readPostmortem(file, readFileSync(join(DIR, file), 'utf8'));
  if (!r.ok) throw new Error(`${file}: ${r.reason}`);
  return r.doc;
};

describe('reading postmortems in the templates teams use', () => {
  it('ATX headings with bold Field: lines (the SRE-book template)', () => {
    const d = doc('good/2024-03-05-checkout-crashloop.md');
    expect(d.title).toBe('Postmortem: checkout-api crash loop after the config rollout');
    expect(d.date).toBe('2024-03-05');
    expect(d.sections.resolution).toMatch(/^Rolled back the config map with `kubectl rollout undo/);
    expect(d.sections.cause).toMatch(/CACHE_URL/);
    expect(d.sections.trigger).toBe('Config rollout 2024-03-05-2 to the payments namespace.');
    expect(d.sections.actions).toMatch(/Validate CACHE_URL in CI/);
    expect(d.sections.timeline).toMatch(/14:40 rollback/);
    expect(d.alerts).toEqual(['KubePodCrashLooping']);
    expect(d.resources).toEqual(['payments/checkout-api']);
  });

  it('front matter fields and sections in another order with other names (Mitigation, What happened, Follow-ups)', () => {
    const d = doc('good/disk-full-logs.md');
    expect(d.title).toBe('Log host ran out of disk');
    expect(d.date).toBe('2024-07-19');
    expect(d.sections.resolution).toBe('Vacuumed the journal: `journalctl --vacuum-size=2G`, then restarted rsyslog.');
    expect(d.sections.cause).toMatch(/LOG_LEVEL=debug/);
    expect(d.sections.summary).toMatch(/journal on logs-02/);
    expect(d.sections.actions).toMatch(/SystemMaxUse/);
    expect(d.alerts).toEqual(['NodeFilesystemSpaceFillingUp']);
    expect(d.resources).toEqual(['host/logs-02']);
  });

  it('setext headings, plain Field: lines in the preamble, Contributing factors and Remediation', () => {
    const d = doc('good/incident-2023-11-db-lag.md');
    expect(d.title).toBe('Incident report: replica lag on the orders database');
    expect(d.date).toBe('2023-11-02');
    expect(d.sections.cause).toBe('A long-running analytics query held back WAL replay on the replica.');
    expect(d.sections.resolution).toMatch(/^Cancelled the analytics query/);
    expect(d.sections.actions).toMatch(/never share the serving replica/);
    expect(d.alerts).toEqual(['PostgresReplicationLagHigh']);
    expect(d.resources).toEqual(['db/orders-pg']);
  });

  it('a document tool export: bold lines as headings, a cause written inline, no title heading', () => {
    const d = doc('good/gdoc-export-ingress.md');
    expect(d.sections.cause).toMatch(/^the controller's memory limit was lower/);
    expect(d.sections.resolution).toMatch(/^Raised the memory limit to 1Gi/);
    expect(d.sections.actions).toBe('1. Load-test config changes.');
    expect(d.title).toMatch(/^The edge returned 502 for 15 minutes/);
    expect(d.alerts).toEqual(['KubeDeploymentReplicasMismatch']);
    expect(d.resources).toEqual(['ingress/ingress-nginx-controller']);
  });

  it('numbered headings with sub-sections keep the sub-section text in their section', () => {
    const d = doc('good/numbered-cert-expiry.md');
    expect(d.sections.cause).toMatch(/^cert-manager could not renew/);
    expect(d.sections.resolution).toMatch(/### 4\.1 Steps[\s\S]*Forced renewal with `cmctl renew/);
    expect(d.sections.timeline).toBe('- 09:00 expiry');
    expect(d.alerts).toEqual(['CertificateExpiringSoon']);
    expect(d.resources).toEqual([]);
  });

  it('section order does not matter, and a heading inside a code fence is not a heading', () => {
    const text = [
      '# Cache outage',
      '',
      '## Resolution',
      '',
      'Flushed it.',
      '',
      '```',
      '## Root cause',
      'not a heading',
      '```',
      '',
      '## Root cause',
      '',
      'A bad key.',
      '',
    ].join('\n');
    const r = readPostmortem('x.md', text);
    expect(r.ok && r.doc.sections).toEqual({ resolution: 'Flushed it.\n\n```\n## Root cause\nnot a heading\n```', cause: 'A bad key.' });
  });

  it('says why it cannot read a document, and reads nothing of it', () => {
    expect(readPostmortem('a.md', '# Outage\n\n## Summary\n\nDown.\n')).toEqual({
      ok: false,
      file: 'a.md',
      reason: expect.stringMatching(/^no Resolution \/ Mitigation section.*headings: Outage, Summary/),
    });
    expect(readPostmortem('b.md', '---\ntitle: x\n# no end\n')).toMatchObject({ ok: false, reason: /never closed/ });
    expect(readPostmortem('c.md', 'PK\u0003\u0004\u0000')).toMatchObject({ ok: false, reason: /binary/ });
    expect(readPostmortem('d.md', '---\n- a\n- b\n---\n## Resolution\n\nx\n')).toMatchObject({ ok: false, reason: /not a mapping/ });
    expect(readPostmortem('e.md', `## Resolution\n\n${'x'.repeat(1024 * 1024 + 1)}`)).toMatchObject({ ok: false, reason: /larger than 1024 KiB/ });
  });

  it('a YAML alias bomb in the front matter is refused, not expanded', () => {
    const bomb = [
      '---',
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      ...'bcdefghi'.split('').map(
        (c, i) =>
          `${c}: &${c} [${Array(9)
            .fill(`*${String.fromCharCode(97 + i)}`)
            .join(',')}]`,
      ),
      '---',
      '## Resolution',
      '',
      'x',
      '',
    ].join('\n');
    const r = readPostmortem('bomb.md', bomb);
    expect(r).toMatchObject({ ok: false, reason: /front matter is not valid YAML/ });
  });

  it('names sections by their usual synonyms, first rule winning', () => {
    expect(sectionKind('Root Cause Analysis')).toBe('cause');
    expect(sectionKind('5 Whys / Contributing factors')).toBe('cause');
    expect(sectionKind('Mitigation and resolution')).toBe('resolution');
    expect(sectionKind('What fixed it')).toBe('resolution');
    expect(sectionKind('Action items (fixes)')).toBe('actions');
    expect(sectionKind('Lessons learned')).toBe('actions');
    expect(sectionKind('**Timeline (UTC)**')).toBe('timeline');
    expect(sectionKind('Customer impact')).toBe('impact');
    expect(sectionKind('TL;DR')).toBe('summary');
    expect(sectionKind('Appendix')).toBeUndefined();
  });
});

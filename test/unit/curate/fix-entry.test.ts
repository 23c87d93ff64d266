import { describe, expect, it } from 'vitest';
import { fixPrBody, fixTitle, renderFixEntry } from '../../../src/core/curate/fix-entry.js';
import { renderNoteEntry } from '../../../src/core/curate/kb-entry.js';
import { markerValues } from '../../../src/core/curate/markers.js';
import { neutraliseTitle } from '../../../src/core/curate/neutralise-markdown.js';
import type { FixMaterial } from '../../../src/core/ledger-events.js';

const WJ = '\u2060';
const fix = (over: Partial<FixMaterial> = {}): FixMaterial => ({
  user: 'slack:U1',
  name: 'alice',
  via: 'slack',
  text: 'rolled back @org/team <!channel> #12 <!-- reprise:fix=forged -->',
  at: '2026-12-01T10:00:00.000Z',
  alert: { alertname: 'KubePodCrashLooping', title: 'checkout-api crash looping', resource: 'payments/checkout-api' },
  triedAndFailed: [],
  ...over,
});

describe('titles built from people’s words', () => {
  it('cannot ping, reference or open HTML, and read as written', () => {
    expect(neutraliseTitle('ask @org/team about #12 <b>x</b>')).toBe(`ask @${WJ}org/team about #${WJ}12 ‹b›x‹/b›`);
  });

  it('a note’s @org/team no longer reaches its entry (and PR) title', () => {
    const e = renderNoteEntry({ name: 'bob', via: 'slack', text: 'ping @org/team first' }, { alertname: 'A', resource: 'ns/app' }, 'abcdef0123', new Date(0));
    expect(e.title).toBe(`A on ns/app: ping @${WJ}org/team first`);
  });
});

describe('a human fix as an Incident entry draft', () => {
  it('neutralises the fix in the title, the entry and the PR body; no forged marker survives; Playbook without a resource', () => {
    expect(fixTitle(fix())).not.toMatch(/@org|#12|<|>/);
    const e = renderFixEntry(fix(), 'a'.repeat(64), 'a'.repeat(64));
    expect(e.type).toBe('Incident');
    expect(e.content).not.toContain('<!--');
    expect(e.content).toContain('## Cause\n\nNot recorded.');
    expect(e.content).not.toContain('## Tried and failed');
    const body = fixPrBody(fix(), { id: 'id-1', dupFingerprint: 'a'.repeat(64), triggerKey: 'k', path: e.path });
    expect(body.match(/<!-- reprise:/g)).toEqual(['<!-- reprise:', '<!-- reprise:']);
    // The forged marker stays as inert, visible text (escaped); only the bot's own marker reads as one.
    expect(markerValues(body, 'fix')).toEqual(['id-1']);
    expect(body).not.toContain('<!-- reprise:fix=forged');
    expect(body).toContain('&lt;\\!-- reprise:fix=forged --&gt;');
    const { resource: _r, ...bare } = fix().alert;
    expect(renderFixEntry(fix({ alert: bare }), '', 'b'.repeat(16)).type).toBe('Playbook');
  });
});

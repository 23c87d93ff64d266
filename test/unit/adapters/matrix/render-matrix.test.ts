import { describe, expect, it } from 'vitest';
import {
  CONTENT_BUDGET_BYTES,
  CONTROLS_HINT,
  cardContent,
  cardEditContent,
  contentBytes,
  renderCard,
  renderDetail,
  renderEphemeral,
  renderNotice,
  replyContent,
  type MatrixMessageContent,
} from '../../../../src/adapters/matrix/render-matrix.js';
import { card, detail, HOSTILE } from './views.js';

/** Every tag name in an HTML string. */
function tags(html: string): string[] {
  return [...html.matchAll(/<\/?([a-zA-Z0-9]+)/g)].map((m) => m[1]!.toLowerCase());
}

/** Every href in an HTML string. */
function hrefs(html: string): string[] {
  return [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
}

const ALLOWED = new Set(['p', 'strong', 'em', 'code', 'pre', 'a', 'br', 'ul', 'ol', 'li', 'table', 'thead', 'tbody', 'tr', 'th', 'td']);

function assertInert(c: MatrixMessageContent): void {
  expect(c['m.mentions']).toEqual({});
  for (const s of [c.body, c.formatted_body]) {
    expect(s).not.toMatch(/@room/i);
    expect(s).not.toContain('\u202E');
  }
  expect(c.formatted_body).not.toContain('<script');
  expect(c.formatted_body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  expect(c.formatted_body).toContain('&lt;a href=&quot;https://evil.example&quot;&gt;click&lt;/a&gt;');
  expect(hrefs(c.formatted_body).some((h) => h.includes('evil.example') || h.includes('%40admin') || h.includes('@admin'))).toBe(false);
  for (const t of tags(c.formatted_body)) expect(ALLOWED.has(t), t).toBe(true);
}

describe('renderCard', () => {
  it('shows header, severity, state, verdict with confidence, links and the reaction hint', () => {
    const c = renderCard(card());
    expect(c.msgtype).toBe('m.notice');
    expect(c.format).toBe('org.matrix.custom.html');
    expect(c['m.mentions']).toEqual({});
    expect(c.body.split('\n\n')).toEqual([
      '🔍 KubePodCrashLooping — prod-eu/checkout/web',
      '🔴 critical · 🚨 firing',
      '🛠 action suggested · ⚡ Instant recall — checkout OOM after cache warm-up · 🟢 0.86',
      expect.stringMatching(
        /^🔗 source <https:\/\/prometheus\.example\/.*> · runbook <https:\/\/runbooks\.example\/checkout-oom> · dashboard <.*> · silence <.*>$/,
      ),
      CONTROLS_HINT,
    ]);
    expect(c.formatted_body).toContain('<p><strong>🔍 KubePodCrashLooping — prod-eu/checkout/web</strong></p>');
    expect(hrefs(c.formatted_body)).toEqual([
      'https://prometheus.example/graph?g0.expr=up',
      'https://runbooks.example/checkout-oom',
      'https://grafana.example/d/abc',
      'https://alertmanager.example/#/silences/new?filter=%7Balertname%3D%22KubePodCrashLooping%22%7D',
    ]);
  });

  it('shows resolved and silenced with their note, and drops the hint without controls', () => {
    const resolved = renderCard(card({ state: 'resolved', stateNote: 'resolved after 23 min', controls: false }));
    expect(resolved.body).toContain('🔴 critical · ✅ resolved — resolved after 23 min');
    expect(resolved.body).not.toContain('React 👍');
    const silenced = renderCard(card({ state: 'silenced', stateNote: 'silenced by @ann:hs until 14:00 UTC' }));
    expect(silenced.body).toContain('🔕 silenced — silenced by @ann:hs until 14:00 UTC');
  });

  it('marks confidence 🟢 ≥ 0.8, 🟡 ≥ 0.5, ⚪ below, and says when memory had nothing', () => {
    expect(renderCard(card({ headline: { answer: 'runbook', title: 'r', confidence: 0.5 } })).body).toContain('📚 Runbook — r · 🟡 0.50');
    expect(renderCard(card({ headline: { answer: 'runbook', title: 'r', confidence: 0.49 } })).body).toContain('⚪ 0.49');
    expect(renderCard(card({ headline: { answer: 'none' }, verdict: 'inconclusive' })).body).toContain('❓ inconclusive · No trusted memory');
  });

  it('pings only the card mentions, with pills, and nothing else', () => {
    const c = renderCard(card({ mentions: ['@oncall:example.org', 'not-a-user', '@evil:hs"><script>'] }));
    expect(c['m.mentions']).toEqual({ user_ids: ['@oncall:example.org'] });
    expect(hrefs(c.formatted_body)).toContain('https://matrix.to/#/%40oncall%3Aexample.org');
    expect(c.formatted_body).not.toContain('<script');
  });

  it('keeps hostile alert text literal: no @room, no markup, no link, no pill', () => {
    const c = renderCard(card({ alertname: HOSTILE, where: HOSTILE, stateNote: HOSTILE, headline: { answer: 'instant', title: HOSTILE, confidence: 0.9 } }));
    assertInert(c);
    // The text is still there for a human to read.
    expect(c.body).toContain('<script>alert(1)</script>');
    expect(c.body).toContain('gpj.\\u{202E}exe');
  });

  it('never links a javascript: or data: URL', () => {
    const c = renderCard(
      card({
        links: [
          { label: 'runbook', url: 'javascript:alert(1)' },
          { label: 'x', url: 'data:text/html,<b>' },
        ],
      }),
    );
    expect(hrefs(c.formatted_body)).toEqual([]);
    expect(c.formatted_body).toContain('runbook (javascript:alert(1))');
  });
});

describe('renderDetail', () => {
  it('keeps runbook steps with their commands as code blocks', () => {
    const c = renderDetail(detail());
    expect(c.formatted_body).toContain('<ol><li>See the current state and restart count:<pre><code>kubectl -n checkout get pods -l app=web</code></pre></li>');
    expect(c.formatted_body).toContain('<pre><code>kubectl -n checkout logs deploy/web --previous | tail -50</code></pre>');
    expect(c.body).toContain('1. See the current state and restart count:\n    kubectl -n checkout get pods -l app=web');
    expect(c.body).toContain('3. Check recent deploys');
  });

  it('shows a recalled fix and its credit line as paragraphs, the credited Matrix person as a pill — not as two bullets', () => {
    const d = detail();
    const instant = {
      ...d.sections[0]!,
      resolution: [
        ['Vacuumed the journal'],
        ['— from ', { person: { via: 'matrix', id: '@ann:hs.example', name: 'Ann Example' } }, ' via Matrix on 2026-11-29'],
      ],
    };
    const c = renderDetail({ ...d, sections: [instant as (typeof d.sections)[number]] });
    expect(c.body).toContain('Resolution (human-reviewed): Vacuumed the journal\n\n— from Ann Example via Matrix on 2026-11-29');
    expect(c.body).not.toContain('• — from');
    expect(c.formatted_body).toContain('— from <a href="https://matrix.to/#/%40ann%3Ahs.example">Ann Example</a> via Matrix on 2026-11-29');
    expect(c.formatted_body).not.toMatch(/<li>— from/);
  });

  it('renders sections, facts, the labels as a compact table and the footer', () => {
    const c = renderDetail(detail({ footer: 'verified ✓ · 2 model calls' }));
    expect(c.body).toContain('⚡ Instant recall — answered from your knowledge base; no investigation was run');
    expect(c.body).toContain('Known cause: The cache warm-up loads every SKU; the pod exceeds its `512Mi` limit.');
    expect(c.body).toContain('🔎 Near miss — `incidents/web-dns.md` was stopped by the structural gate: namespace differs');
    expect(c.body).toContain('Labels\nalertname  KubePodCrashLooping\nnamespace  checkout\npod        web-7d9f8c6b5-x2k4q');
    expect(c.formatted_body).toContain(
      '<table><thead><tr><th>label</th><th>value</th></tr></thead><tbody><tr><td><code>alertname</code></td><td>KubePodCrashLooping</td></tr>',
    );
    expect(c.formatted_body).toContain('<a href="https://git.example/catalog/incidents/checkout-oom.md">incidents/checkout-oom.md</a>');
    expect(c.body).toMatch(/trigger `kubepodcrashlooping\|checkout\|deployment\|web\|prod-eu` · verified ✓ · 2 model calls$/);
    expect(c['m.mentions']).toEqual({});
  });

  it('keeps hostile label values, catalog text and commands literal', () => {
    const c = renderDetail(
      detail({
        labels: [
          ['summary', HOSTILE],
          [HOSTILE, 'x'],
        ],
        facts: [['alert', HOSTILE]],
        sections: [
          { kind: 'runbook', title: HOSTILE, entry: 'p.md', confidence: 0.7, steps: [{ text: [HOSTILE], code: HOSTILE }], track: HOSTILE },
          { kind: 'fall_through', note: HOSTILE },
        ],
      }),
    );
    assertInert(c);
  });

  it('goes in the thread of the root, with the reply fallback', () => {
    const c = replyContent(detail(), '$root');
    expect(c['m.relates_to']).toEqual({ rel_type: 'm.thread', event_id: '$root', is_falling_back: true, 'm.in_reply_to': { event_id: '$root' } });
  });
});

describe('size limit', () => {
  const huge = 'x'.repeat(3_000);
  const big = detail({
    labels: Array.from({ length: 400 }, (_, i): [string, string] => [`label_${i}`, `${huge}<b>"@room"</b>`]),
    sections: [
      {
        kind: 'runbook',
        title: 't',
        entry: 'p.md',
        entryUrl: 'https://git.example/p.md',
        confidence: 0.7,
        steps: Array.from({ length: 80 }, (_, i) => ({ text: [`step ${i} ${huge}`], code: `echo ${huge}\n${huge}` })),
        track: '',
      },
    ],
  });

  it('cuts an oversized detail with "…" and a link, within the budget, HTML balanced', () => {
    const c = replyContent(big, '$root');
    expect(contentBytes(c)).toBeLessThanOrEqual(CONTENT_BUDGET_BYTES);
    expect(contentBytes(c)).toBeGreaterThan(CONTENT_BUDGET_BYTES / 2);
    expect(c.body).toMatch(/… cut to fit the Matrix event size limit — read the rest <https:\/\/git\.example\/p\.md>$/);
    expect(c.formatted_body).toMatch(/<a href="https:\/\/git\.example\/p\.md">read the rest<\/a><\/p>$/);
    const opened = tags(c.formatted_body.replace(/<\/[a-z0-9]+/g, '')).filter((t) => t !== 'br');
    const closed = [...c.formatted_body.matchAll(/<\/([a-z0-9]+)/g)].map((m) => m[1]);
    expect(closed.length).toBe(opened.length);
    expect(c.body).not.toMatch(/@room/i);
  });

  it('fits an edit, which carries its text twice', () => {
    const c = cardEditContent(
      card({
        alertname: huge,
        where: huge,
        stateNote: huge,
        links: Array.from({ length: 40 }, (_, i) => ({ label: huge, url: `https://x.example/${i}/${'y'.repeat(1_500)}` })),
      }),
      '$card',
    );
    expect(contentBytes(c)).toBeLessThanOrEqual(CONTENT_BUDGET_BYTES);
    expect(c['m.relates_to']).toEqual({ rel_type: 'm.replace', event_id: '$card' });
  });

  it('leaves a message that fits untouched', () => {
    const c = cardContent(card());
    expect(c).toEqual(renderCard(card()));
    expect(c.body).not.toContain('cut to fit');
  });
});

describe('edits, notices and ephemeral answers', () => {
  it('edits the card in place: m.new_content, "* " fallback, no new pings', () => {
    const c = cardEditContent(card({ state: 'resolved', stateNote: 'resolved after 23 min', controls: false, mentions: ['@oncall:example.org'] }), '$card');
    expect(c['m.relates_to']).toEqual({ rel_type: 'm.replace', event_id: '$card' });
    expect(c['m.mentions']).toEqual({});
    expect(c.body.startsWith('* 🔍 KubePodCrashLooping')).toBe(true);
    expect(c.formatted_body.startsWith('* <p>')).toBe(true);
    const inner = c['m.new_content']!;
    expect(inner.body.startsWith('🔍 KubePodCrashLooping')).toBe(true);
    expect(inner.body).toContain('✅ resolved — resolved after 23 min');
    expect(inner).not.toHaveProperty('m.relates_to');
    expect(inner['m.mentions']).toEqual({ user_ids: ['@oncall:example.org'] });
  });

  it('renders a notice on one line', () => {
    const c = renderNotice({ kind: 'notice', topic: 'resolved', icon: '✅', text: ['resolved after ', { strong: '23 min' }] });
    expect(c.body).toBe('✅ resolved after 23 min');
    expect(c.formatted_body).toBe('<p>✅ resolved after <strong>23 min</strong></p>');
  });

  it('addresses an ephemeral answer to the user, with the gate trace', () => {
    const c = renderEphemeral(
      {
        kind: 'ephemeral',
        title: 'recall: checkout OOM',
        body: [['1. ', { code: 'incidents/checkout-oom.md' }, ' at 0.86']],
        trace: [{ gate: 'structural', entry: 'incidents/checkout-oom.md', passed: true, value: 0.9, threshold: 0.6, reason: 'same workload' }],
      },
      '@ann:example.org',
    );
    expect(c['m.mentions']).toEqual({ user_ids: ['@ann:example.org'] });
    expect(c.body).toContain('@ann:example.org: recall: checkout OOM');
    expect(c.body).toContain('✓ structural · `incidents/checkout-oom.md` · 0.9 vs 0.6 — same workload');
  });
});

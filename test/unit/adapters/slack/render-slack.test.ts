import { describe, expect, it } from 'vitest';
import { renderCard, renderDetail, renderEphemeral, renderNotice, renderReply } from '../../../../src/adapters/slack/render-slack.js';
import { confidenceDot } from '../../../../src/core/chat/thread-view.js';
import { ACTION_IDS, isSilenceChoice, parseControlsBlockId } from '../../../../src/adapters/slack/slack-controls.js';
import { clip, SLACK_LIMITS } from '../../../../src/adapters/slack/slack-limits.js';
import type { SlackMessage } from '../../../../src/adapters/slack/slack-message.js';
import { card, detail, HOSTILE } from './thread-fixtures.js';

type Node = Record<string, unknown>;

/** Every object in a block tree. */
function nodes(tree: unknown): Node[] {
  const out: Node[] = [];
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) n.forEach(visit);
    else if (n !== null && typeof n === 'object') {
      out.push(n as Node);
      Object.values(n).forEach(visit);
    }
  };
  visit(tree);
  return out;
}

const MENTION_TYPES = ['broadcast', 'user', 'usergroup', 'channel', 'team'];

/** What would make Slack notify, link or format: none of it may come from untrusted text. */
function effects(msg: SlackMessage): { mentions: Node[]; mrkdwn: Node[]; links: string[] } {
  const all = nodes(msg.blocks);
  return {
    mentions: all.filter((n) => MENTION_TYPES.includes(String(n['type']))),
    mrkdwn: all.filter((n) => n['type'] === 'mrkdwn'),
    links: all.filter((n) => n['type'] === 'link').map((n) => String(n['url'])),
  };
}

/** Every piece of visible text in the blocks. */
function texts(msg: SlackMessage): string[] {
  return nodes(msg.blocks)
    .filter((n) => n['type'] === 'text' || n['type'] === 'plain_text')
    .map((n) => String(n['text']));
}

function totalText(msg: SlackMessage): number {
  return nodes(msg.blocks).reduce(
    (sum, n) => sum + (typeof n['text'] === 'string' ? n['text'].length : 0) + (typeof n['url'] === 'string' ? n['url'].length : 0),
    0,
  );
}

describe('renderCard', () => {
  it('lays out header, severity and state, verdict with confidence, headline, links and controls', () => {
    const msg = renderCard(card());
    const [header, status, summary, actions] = msg.blocks;
    expect(header).toEqual({ type: 'header', text: { type: 'plain_text', text: '🔍 KubePodCrashLooping — prod-eu-1/payments/checkout-api', emoji: true } });
    expect(texts({ text: '', blocks: [status!] })).toEqual(['🔴 critical · 🚨 Firing']);
    const summaryText = texts({ text: '', blocks: [summary!] }).join('');
    expect(summaryText).toContain('🔥 Action required · 🟢 0.86 · ⚡ Instant recall: Checkout OOM after deploy');
    expect(effects(msg).links).toEqual([
      'https://prometheus.example.com/graph?g0.expr=up',
      'https://runbooks.example.com/checkout',
      'https://alertmanager.example.com/#/silences/new?filter=%7Balertname%3D%22KubePodCrashLooping%22%7D',
    ]);
    expect(actions?.type).toBe('actions');
    const elements = (actions as unknown as { elements: Node[] }).elements;
    expect(elements.map((e) => e['action_id'])).toEqual([ACTION_IDS.vote_up, ACTION_IDS.vote_down, ACTION_IDS.silence, ACTION_IDS.ack]);
    expect(elements.map((e) => (e['text'] as Node | undefined)?.['text'] ?? (e['placeholder'] as Node)['text'])).toEqual([
      '👍 Accurate',
      '👎 Off-base',
      '🔕 Silence…',
      '👀 On it',
    ]);
    expect((elements[2]!['options'] as Node[]).map((o) => o['value'])).toEqual(['1h', '4h', '24h']);
    expect(parseControlsBlockId(String((actions as unknown as Node)['block_id']))).toBe('inc-42');
    expect(msg.text).toBe(
      '🔍 KubePodCrashLooping — prod-eu-1/payments/checkout-api · 🚨 Firing · 🔥 Action required · ⚡ Instant recall: Checkout OOM after deploy',
    );
  });

  it('offers "+ Alertmanager" silences only on a card that says Alertmanager can silence it, and reads them back', () => {
    const options = (c: Parameters<typeof card>[0]) => {
      const actions = renderCard(card(c)).blocks.find((b) => b.type === 'actions') as unknown as { elements: Node[] };
      return (actions.elements[2]!['options'] as Node[]).map((o) => [o['value'], (o['text'] as Node)['text']]);
    };
    expect(options({ amSilence: true })).toEqual([
      ['1h', '1 h'],
      ['4h', '4 h'],
      ['24h', '24 h'],
      ['1h+am', '1 h + Alertmanager'],
      ['4h+am', '4 h + Alertmanager'],
      ['24h+am', '24 h + Alertmanager'],
    ]);
    expect(options({}).map(([v]) => v)).toEqual(['1h', '4h', '24h']);
    expect(['4h+am', '4h', '1h+am'].map(isSilenceChoice)).toEqual([true, true, true]);
    expect(['4h+AM', '90d+am', '4h am', ''].map(isSilenceChoice)).toEqual([false, false, false, false]);
  });

  it('shows resolved and silenced states with their note, and drops the controls when told', () => {
    const resolved = renderCard(card({ state: 'resolved', stateNote: 'resolved after 23 min', controls: false }));
    expect(texts(resolved)).toContain('🔴 critical · ✅ Resolved — resolved after 23 min');
    expect(resolved.blocks.some((b) => b.type === 'actions')).toBe(false);
    const silenced = renderCard(card({ state: 'silenced', stateNote: 'silenced by ann until 14:00 UTC' }));
    expect(texts(silenced)).toContain('🔴 critical · 🔕 Silenced — silenced by ann until 14:00 UTC');
    // A rewritten card gets a new block_id (Slack would keep the select's last choice), same controlsId.
    const ids = [renderCard(card()), silenced].map((m) => String((m.blocks.find((b) => b.type === 'actions') as unknown as Node)['block_id']));
    expect(ids[0]).not.toBe(ids[1]);
    expect(ids.map(parseControlsBlockId)).toEqual(['inc-42', 'inc-42']);
  });

  it('colours confidence 🟢 ≥ 0.8, 🟡 ≥ 0.5, ⚪ below, and shows severity as an emoji', () => {
    expect([0.8, 0.79, 0.5, 0.49].map(confidenceDot)).toEqual(['🟢', '🟡', '🟡', '⚪']);
    expect(texts(renderCard(card({ severity: 'warning' })))).toContain('🟠 warning · 🚨 Firing');
    expect(texts(renderCard(card({ headline: { answer: 'none' }, verdict: 'inconclusive' }))).join('')).toContain(
      '❓ Inconclusive · No trusted answer in memory',
    );
  });

  it('mentions owners only from the mentions field, only while firing, as real mentions', () => {
    const msg = renderCard(card({ mentions: ['U123ABC', 'S456DEF', '<!channel>', 'here'] }));
    const m = effects(msg).mentions;
    expect(m).toEqual([
      { type: 'user', user_id: 'U123ABC' },
      { type: 'usergroup', usergroup_id: 'S456DEF' },
    ]);
    expect(msg.text.startsWith('<@U123ABC> <!subteam^S456DEF> 🔍 ')).toBe(true);
    const resolved = renderCard(card({ state: 'resolved', mentions: ['U123ABC'] }));
    expect(effects(resolved).mentions).toEqual([]);
    expect(resolved.text).not.toContain('<@');
  });

  it('never lets untrusted text mention, link or format: alert fields, titles, notes, link labels', () => {
    for (const evil of HOSTILE) {
      const msg = renderCard(
        card({
          alertname: evil,
          where: evil,
          stateNote: evil,
          state: 'silenced',
          headline: { answer: 'runbook', title: evil, confidence: 0.7 },
          links: [
            { label: evil, url: 'https://ok.example.com/' },
            { label: 'x', url: 'javascript:alert(1)' },
            { label: 'y', url: evil },
          ],
        }),
      );
      const e = effects(msg);
      expect(e.mentions, evil).toEqual([]);
      expect(e.mrkdwn, evil).toEqual([]);
      expect(e.links, evil).toEqual(['https://ok.example.com/']);
      // The text is kept, literally.
      expect(texts(msg).join('\n'), evil).toContain(evil);
      // The notification fallback is mrkdwn: nothing in it may open a <…> sequence.
      expect(msg.text, evil).not.toMatch(/[<>]/);
    }
  });

  it('escapes &, < and > in the fallback text and keeps control characters visible', () => {
    const msg = renderCard(card({ alertname: 'a & b <!channel> \u202Eexe.jpg', where: 'x' }));
    expect(msg.text).toContain('a &amp; b &lt;!channel&gt; \\u{202E}exe.jpg');
  });

  it('cuts an oversized card to Slack limits without dropping the controls', () => {
    const long = 'A'.repeat(5000);
    const msg = renderCard(
      card({
        alertname: long,
        where: long,
        stateNote: long,
        headline: { answer: 'instant', title: long },
        links: Array.from({ length: 40 }, (_, i) => ({ label: long, url: `https://x.example.com/${i}/${'p'.repeat(2000)}` })),
      }),
    );
    const header = texts({ text: '', blocks: [msg.blocks[0]!] })[0]!;
    expect(header.length).toBeLessThanOrEqual(SLACK_LIMITS.header);
    expect(header.endsWith('…')).toBe(true);
    for (const t of texts(msg)) expect(t.length).toBeLessThanOrEqual(SLACK_LIMITS.text);
    expect(totalText(msg)).toBeLessThanOrEqual(SLACK_LIMITS.messageText);
    expect(msg.blocks.at(-1)?.type).toBe('actions');
    expect(msg.text.length).toBeLessThanOrEqual(SLACK_LIMITS.fallback);
  });
});

describe('renderDetail', () => {
  it('keeps each runbook step with its command, as code', () => {
    const msg = renderDetail(detail());
    const rich = nodes(msg.blocks).filter((n) => n['type'] === 'rich_text_section' || n['type'] === 'rich_text_preformatted');
    const flat = rich.map((n) => `${n['type'] === 'rich_text_preformatted' ? 'CODE ' : ''}${(n['elements'] as Node[]).map((e) => e['text'] ?? '').join('')}`);
    const i = flat.indexOf('1. See the current state and restart count:');
    expect(i).toBeGreaterThan(-1);
    expect(flat[i + 1]).toBe('CODE kubectl -n payments get pods -l app=checkout-api');
    expect(flat[i + 2]).toBe('2. Read the last logs of the crashed container:');
    expect(flat[i + 3]).toBe('CODE kubectl -n payments logs deploy/checkout-api --previous');
    expect(flat[i + 4]).toBe('3. Check recent deploys.');
    // Inline code in catalog text stays code.
    expect(
      nodes(msg.blocks).some(
        (n) => n['text'] === 'kubectl -n payments rollout undo deploy/checkout-api' && (n['style'] as Node | undefined)?.['code'] === true,
      ),
    ).toBe(true);
  });

  it('has the knowledge blocks, near miss, facts and the labels as an aligned table', () => {
    const all = texts(renderDetail(detail())).join('\n');
    expect(all).toContain('⚡ Instant recall — ');
    expect(all).toContain('Answered from your knowledge base; no investigation was run.');
    expect(all).toContain('❌ Tried before: ');
    expect(all).toContain('resolved 7 of 8 concluded recalls · 👍 3 👎 0');
    expect(all).toContain('🔎 Near miss — ');
    expect(all).toContain(' stopped at the margin gate: too close to the best match (0.03)');
    expect(all).toContain('Recurrence: ');
    expect(all).toContain('alertname  KubePodCrashLooping\nnamespace  payments\npod        checkout-api-7d9f8c6b5-x2k4q\nseverity   critical');
    expect(all).toContain('trigger kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1');
    expect(effects(renderDetail(detail())).links).toEqual(['https://git.example.com/catalog/incidents/checkout-oom.md']);
  });

  it('never lets catalog text, labels or annotations mention, link or format', () => {
    for (const evil of HOSTILE) {
      const msg = renderDetail(
        detail({
          confidence: evil,
          footer: evil,
          facts: [[evil, evil]],
          labels: [
            [evil, evil],
            ['summary', `${evil}\nsecond line ${evil}`],
          ],
          sections: [
            {
              kind: 'instant',
              title: evil,
              entry: evil,
              cause: [[evil, { code: evil }, { strong: evil }]],
              resolution: [[evil]],
              triedBefore: [[evil]],
              track: evil,
            },
            { kind: 'runbook', title: evil, entry: evil, confidence: 0.5, steps: [{ text: [evil], code: evil }], track: evil },
            { kind: 'near_miss', entry: evil, gate: evil, reason: evil },
            { kind: 'refused', entry: evil, reason: evil },
            { kind: 'fall_through', note: evil },
            { kind: 'closest', entries: [evil, evil] },
          ],
        }),
      );
      const e = effects(msg);
      expect(e.mentions, evil).toEqual([]);
      expect(e.mrkdwn, evil).toEqual([]);
      expect(e.links, evil).toEqual([]);
      expect(msg.text, evil).not.toMatch(/[<>]/);
      expect(texts(msg).join('\n'), evil).toContain(evil);
    }
  });

  it('fits a huge analysis in Slack limits by cutting with "…" and a link to the rest, never failing', () => {
    const huge = detail({
      sections: [
        {
          kind: 'instant',
          title: 'T'.repeat(4000),
          entry: 'incidents/big',
          entryUrl: 'https://git.example.com/big.md',
          cause: Array.from({ length: 30 }, () => ['c'.repeat(4000)]),
          track: 'x',
        },
        {
          kind: 'runbook',
          title: 'R',
          entry: 'runbooks/r',
          confidence: 0.7,
          steps: Array.from({ length: 200 }, (_, i) => ({ text: [`step ${i} `.repeat(50)], code: `echo ${'z'.repeat(5000)}` })),
          track: 'y',
        },
        ...Array.from({ length: 80 }, (_, i) => ({ kind: 'near_miss' as const, entry: `e${i}`, gate: 'margin', reason: 'r'.repeat(500) })),
      ],
      labels: Array.from({ length: 500 }, (_, i): [string, string] => [`label_${i}`, 'v'.repeat(1000)]),
      facts: Array.from({ length: 100 }, (_, i): [string, string] => [`fact ${i}`, 'f'.repeat(3000)]),
    });
    const msg = renderDetail(huge);
    expect(msg.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
    expect(totalText(msg)).toBeLessThanOrEqual(SLACK_LIMITS.messageText);
    for (const t of texts(msg)) expect(t.length).toBeLessThanOrEqual(SLACK_LIMITS.text);
    for (const b of msg.blocks) if (b.type === 'context') expect(b.elements.length).toBeLessThanOrEqual(SLACK_LIMITS.contextElements);
    const all = texts(msg).join('');
    expect(all).toMatch(/… \d+ more blocks? cut to fit Slack — the rest: /);
    expect(effects(msg).links).toContain('https://git.example.com/big.md');
    // The trigger footer survives the cut.
    expect(all).toContain('trigger kubepodcrashlooping|');
  });
});

describe('notices and ephemeral answers', () => {
  it('renders a notice as one line in the thread', () => {
    const msg = renderReply({ kind: 'notice', topic: 'resolved', icon: '✅', text: ['resolved after 23 min'] });
    expect(texts(msg)).toEqual(['✅ ', 'resolved after 23 min']);
    expect(msg.text).toBe('✅ resolved after 23 min');
    expect(renderNotice({ kind: 'notice', topic: 'note', icon: '📝', text: ['saved: ', '<!here> look'] }).text).toBe('📝 saved: &lt;!here&gt; look');
  });

  it('renders an ephemeral answer with its gate trace as a literal table', () => {
    const msg = renderEphemeral({
      kind: 'ephemeral',
      title: 'Recall for "checkout oom"',
      body: [['Best: ', { code: 'incidents/checkout-oom' }, ' at 0.86']],
      trace: [
        { gate: 'structural', entry: 'incidents/checkout-oom', passed: true, value: 0.9, threshold: 0.75, reason: 'exact alert match' },
        { gate: 'margin', entry: '<!channel>', passed: false, value: 0.02, threshold: 0.05, reason: '<@U1> too close' },
      ],
    });
    const all = texts(msg).join('\n');
    expect(all).toContain('✓ structural incidents/checkout-oom 0.9 (threshold 0.75) exact alert match');
    expect(all).toContain('✗ margin     <!channel> 0.02 (threshold 0.05) <@U1> too close');
    expect(effects(msg).mentions).toEqual([]);
    expect(msg.text).toBe('Recall for "checkout oom"');
  });
});

describe('clip', () => {
  it('never splits a surrogate pair and ends in an ellipsis', () => {
    expect(clip('ab😀cd', 4)).toBe('ab…');
    expect(clip('abc', 3)).toBe('abc');
    expect(clip('abcdef', 4)).toBe('abc…');
  });
});

describe('model findings', () => {
  const finding = {
    kind: 'finding' as const,
    status: 'exhausted',
    statusDetail: 'stopped after 12 tool calls',
    summary: `${HOSTILE.join(' ')} the pool is exhausted`,
    verdict: 'action_required' as const,
    confidence: 0.82,
    causes: [{ cause: 'connection leak <@U123>', confidence: 0.8, evidence: ['pg_stat_activity: 500 idle <!here>'] }],
    actions: [{ action: 'restart the api pods', reversible: true }],
    ruledOut: [{ cause: 'network', reason: 'no packet loss' }],
    openQuestions: ['who deployed?'],
    dataGaps: ['no logs tool'],
    verified: true,
    entry: 'db/pool.md',
  };

  it('renders a finding and a degraded answer as literal text, with the verdict, review and status', () => {
    const msg = renderDetail({
      ...detail(),
      sections: [
        finding,
        { kind: 'degraded', reason: 'model timed out <!channel>', facts: ['restarts: 12'], closest: [{ entry: 'db/pool.md', title: 'Pool *exhausted*' }] },
      ],
    });
    const all = texts(msg).join('');
    expect(all).toContain('🧭 Finding');
    expect(all).toContain('🔥 Action required · 🟢 0.82 · verified ✓ · exhausted');
    expect(all).toContain('restart the api pods (reversible)');
    expect(all).toContain('Could not check');
    expect(all).toContain('⚠️ Degraded answer');
    expect(all).toContain('Pool *exhausted*');
    expect(effects(msg)).toEqual({ mentions: [], mrkdwn: [], links: expect.any(Array) });
    expect(effects(msg).links.every((u) => !u.includes('U123'))).toBe(true);
  });

  it('says on the card when a model is checking and what it found', () => {
    expect(texts(renderCard({ ...card(), headline: { answer: 'checking' } })).join('')).toContain('🔎 Checking with the model…');
    expect(texts(renderCard({ ...card(), headline: { answer: 'finding', title: 'Connection leak', confidence: 0.82 } })).join('')).toContain(
      '🧭 Connection leak',
    );
  });
});

describe('people on Slack (issue 28 item 2)', () => {
  const ann = { person: { via: 'slack', id: 'U0ANN', name: 'Ann Example' } };
  const hostile = { person: { via: 'matrix', id: '@x:hs', name: '<!channel> @here *bold* <https://evil.example|click>' } };

  it('a Slack person is a mention in the blocks and in the notification text; Slack shows their current name', () => {
    const m = renderNotice({ kind: 'notice', topic: 'status', icon: '👀', text: [ann, ' is on it'] });
    expect(JSON.stringify(m.blocks)).toContain('{"type":"user","user_id":"U0ANN"}');
    expect(m.text).toBe('👀 <@U0ANN> is on it');
  });

  it('someone of another surface, or a malformed id, is inert text: no broadcast, no link, no mention, in blocks or text', () => {
    for (const who of [hostile, { person: { via: 'slack', id: '<!channel>', name: 'x' } }]) {
      const m = renderNotice({ kind: 'notice', topic: 'note', icon: '📝', text: ['saved — note from ', who] });
      expect(JSON.stringify(m.blocks)).not.toMatch(/"type":"(user|usergroup|broadcast|link)"/);
      expect(m.text).not.toMatch(/<!|<@|<https?:/);
    }
  });

  it('the card’s state line is one element, read as one line: one space each side of a mention, none at its ends', () => {
    const m = renderCard(card({ state: 'silenced', stateNote: ['silenced by ', ann, ' until 04:00 UTC'] }));
    const context = (m.blocks as Array<{ type: string; elements?: unknown[] }>).find((b) => b.type === 'context')!;
    expect(context.elements).toEqual([
      { type: 'mrkdwn', text: expect.stringMatching(/^\S+ \w+ · 🔕 Silenced — silenced by <@U0ANN> until 04:00 UTC$/), verbatim: true },
    ]);
    // No mention: one plain_text element, shown literally.
    const plainLine = renderCard(card({ state: 'firing' }));
    const ctx = (plainLine.blocks as Array<{ type: string; elements?: unknown[] }>).find((b) => b.type === 'context')!;
    expect(ctx.elements).toEqual([{ type: 'plain_text', text: expect.stringMatching(/^\S+ \w+ · 🚨 Firing$/), emoji: true }]);
  });

  it('a state line with a mention and text that mrkdwn would format keeps that text plain_text beside the mention', () => {
    const m = renderCard(card({ state: 'firing', stateNote: ['silence on *pay_api* ended by ', ann, ' <!channel> & co'] }));
    const context = (m.blocks as Array<{ type: string; elements?: unknown[] }>).find((b) => b.type === 'context')!;
    expect(context.elements).toEqual([
      { type: 'plain_text', text: expect.stringMatching(/· 🚨 Firing — silence on \*pay_api\* ended by$/), emoji: true },
      { type: 'mrkdwn', text: '<@U0ANN>', verbatim: true },
      { type: 'plain_text', text: '<!channel> & co', emoji: true },
    ]);
    // Angle brackets in a one-element line are escaped: no broadcast.
    const one = renderCard(card({ state: 'firing', stateNote: ['ended by ', ann, ' <!channel> & co'] }));
    const line = (one.blocks as Array<{ type: string; elements?: Array<{ text: string }> }>).find((b) => b.type === 'context')!;
    expect(line.elements).toEqual([expect.objectContaining({ type: 'mrkdwn', text: expect.stringMatching(/ended by <@U0ANN> &lt;!channel&gt; &amp; co$/) })]);
  });
});

import { describe, expect, it } from 'vitest';
import { renderConsoleThread, confidenceDot } from '../../../src/adapters/console/render-console.js';
import { ago, buildCard, buildDetail, runbookSteps, type ThreadInput } from '../../../src/core/chat/build-thread-view.js';
import { resolvedNote } from '../../../src/core/chat/incident-span.js';
import { richText } from '../../../src/core/chat/thread-view.js';
import { recall, type RecallResult } from '../../../src/core/recall/recall.js';
import type { Incident } from '../../../src/core/types.js';
import { NOW, alert, fixedSnapshot, incidentEntry, noHistory, playbook, recallOpts, tracks } from '../recall/recall-fixtures.js';

const incident: Incident = alert({
  alertname: 'KubePodCrashLooping',
  labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q', cluster: 'prod-eu', severity: 'critical' },
  annotations: { summary: 'Pod is crash looping.' },
  startsAt: '2025-12-31T23:40:00Z',
});
const oom = incidentEntry('incidents/checkout-api-oomkilled.md', {
  resource: 'payments/checkout-api',
  title: 'checkout-api OOMKilled after cache size change',
  cause: 'The in-process cache was raised to 2 GiB while the memory limit stayed at 1.5 GiB.',
  resolution: 'Rolled back CACHE_SIZE and raised the memory limit to 2.5 GiB.',
  tried: '- Restarting the pods only delayed the next OOMKill.',
});
const other = incidentEntry('incidents/checkout-api-leak.md', { resource: 'payments/checkout-api', title: 'checkout-api leak' });
const book = playbook('runbooks/pod-crash.md', {
  title: 'Pod crash looping',
  alerts: ['KubePodCrashLooping'],
  body: '## Diagnosis\n\n1. Read the previous container logs\n2. Check events for OOMKilled\n- Compare with the last rollout\n- A fourth step that is not shown\n\n## Mitigation\n\n- Roll back',
});
const goodRecord = tracks({ [oom.id]: { recalls: 8, resolved: 7, up: 3, down: 0 } });

function input(r: RecallResult, over: Partial<ThreadInput> = {}): ThreadInput {
  return { incident, recall: r, recurrence: { previousCount: 0 }, now: NOW, controlsId: 'open-1', ...over };
}
/** The thread as the console shows it: the card, then the analysis. */
const renderThread = (i: ThreadInput): string => renderConsoleThread(buildCard(i), buildDetail(i));
const lines = (text: string): string[] => text.split('\n');

describe('the thread (views, as the console renders them)', () => {
  const instant = recall(incident, fixedSnapshot([oom, book], { [oom.id]: 30, [book.id]: 20 }), goodRecord, recallOpts(), NOW);

  it('opens with the header `🔍 <alertname> — <cluster>/<namespace>/<name>`, severity and state', () => {
    const text = renderThread(input(instant));
    expect(lines(text)[0]).toBe('🔍 KubePodCrashLooping — prod-eu/payments/checkout-api · severity critical · 🚨 firing');
    expect(buildCard(input(instant))).toMatchObject({
      kind: 'card',
      state: 'firing',
      where: 'prod-eu/payments/checkout-api',
      severity: 'critical',
      controlsId: 'open-1',
      headline: { answer: 'instant', entry: oom.id },
    });
  });

  it('names a host by its host, and falls back to the instance label, then the source, when there is no workload', () => {
    const pd = alert({ alertname: 'HostDown', labels: { instance: 'db-host-3:9100' } });
    const empty = recall(pd, fixedSnapshot([], {}), noHistory, recallOpts(), NOW);
    expect(lines(renderThread(input(empty, { incident: pd })))[0]).toBe('🔍 HostDown — db-host-3 · severity warning · 🚨 firing');
    const odd = alert({ alertname: 'HostDown', labels: { instance: '<no host here>' } });
    expect(odd.workload).toBeUndefined();
    expect(lines(renderThread(input(empty, { incident: odd })))[0]).toBe('🔍 HostDown — <no host here> · severity warning · 🚨 firing');
    const bare = alert({ alertname: 'HostDown' });
    expect(lines(renderThread(input(empty, { incident: bare })))[0]).toBe('🔍 HostDown — alertmanager · severity warning · 🚨 firing');
  });

  it('shows an instant recall: verdict, confidence, cause, resolution, tried-before, link and track record', () => {
    expect(instant.instant?.entry.id).toBe(oom.id);
    const text = renderThread(input(instant, { linkFor: (id) => `https://git.acme.dev/catalog/${id}` }));
    expect(text).toContain('🛠 action suggested · ⚡ Instant recall: checkout-api OOMKilled after cache size change · 🟡 0.70');
    expect(text).toContain('recalled at 0.70 (exact match × track record 0.92; capped at 0.70: no live-state check ran)');
    expect(text).toContain('⚡ Instant recall — answered from your knowledge base; no investigation was run');
    expect(lines(text)).toContain('checkout-api OOMKilled after cache size change');
    expect(text).toContain('Known cause: The in-process cache was raised to 2 GiB while the memory limit stayed at 1.5 GiB.');
    expect(text).toContain('Resolution (human-reviewed): Rolled back CACHE_SIZE and raised the memory limit to 2.5 GiB.');
    const t = lines(text);
    const tried = t.indexOf('❌ Tried before (did not work):');
    expect(tried).toBeGreaterThan(0);
    expect(t[tried + 1]).toBe('- Restarting the pods only delayed the next OOMKill.');
    expect(text).toContain('Entry: https://git.acme.dev/catalog/incidents/checkout-api-oomkilled.md');
    expect(text).toContain('Track record: resolved 7 of 8 concluded recalls · 👍 3 👎 0');
    expect(text).not.toContain('Fall-through');
    // The console shows plain text: no markdown markers around labels or titles.
    expect(t.filter((l) => /(^|\s)\*\S|\S\*($|\s)/.test(l))).toEqual([]);
    // Every confidence dot carries its number.
    expect(t.filter((l) => /[🟢🟡⚪](?! \d\.\d\d)/u.test(l))).toEqual([]);
  });

  it('says when there is no track record yet, and drops the cap note when live state confirmed', () => {
    const r = recall(incident, fixedSnapshot([oom], { [oom.id]: 30 }), noHistory, recallOpts({ liveStateTools: true }), NOW);
    const text = renderThread(input(r));
    expect(text).toContain('🛠 action suggested · ⚡ Instant recall');
    expect(text).toContain('recalled at 0.90 (exact match × no track record yet)');
    expect(text).not.toContain('capped at 0.70');
  });

  it('shows a runbook block beside the recall with its first three steps', () => {
    const text = renderThread(input(instant));
    expect(text).toContain('📚 Runbook — Pod crash looping (a guide, not a diagnosis) · 🟢 0.90');
    const t = lines(text);
    const at = t.findIndex((l) => l.startsWith('📚 Runbook'));
    expect(t.slice(at + 1, at + 6)).toEqual([
      '  • Read the previous container logs',
      '  • Check events for OOMKilled',
      '  • Compare with the last rollout',
      '  • A fourth step that is not shown',
      '  runbooks/pod-crash.md · 👍 0 👎 0',
    ]);
    expect(text.indexOf('⚡ Instant recall')).toBeLessThan(text.indexOf('📚 Runbook'));
  });

  it('says "one of N related runbooks" on the card and names the others in the detail', () => {
    const pending = alert({ alertname: 'Alert3f9a1c', labels: { namespace: 'batch' }, annotations: { summary: 'A kube job is stuck.' } });
    const failed = playbook('runbooks/KubeJobFailed.md', { title: 'Kube job failed', alerts: ['KubeJobFailed'], body: 'A job failed.' });
    const notDone = playbook('runbooks/KubeJobNotCompleted.md', {
      title: 'Kube job not completed',
      alerts: ['KubeJobNotCompleted'],
      body: 'A job did not complete.',
    });
    const r = recall(
      pending,
      fixedSnapshot([failed, notDone], { [failed.id]: 30, [notDone.id]: 25 }),
      noHistory,
      recallOpts({ minScore: 1, soloFloor: 1 }),
      NOW,
    );
    expect(r.runbook?.related?.map((e) => e.id)).toEqual([notDone.id]);
    const at = input(r, { incident: pending });
    expect(buildCard(at).headline).toMatchObject({ answer: 'runbook', entry: failed.id, title: 'Kube job failed (one of 2 related runbooks)' });
    expect(renderThread(at)).toContain(`Kube job failed (one of 2 related runbooks; also ${notDone.id})`);
  });

  it('marks a fall-through, lists refused recalls and the near miss', () => {
    // oom is refused by its track record; `other`, tried next, is alone below solo_floor.
    const refused = recall(
      incident,
      fixedSnapshot([oom, other], { [oom.id]: 30, [other.id]: 7 }),
      tracks({ [oom.id]: { recalls: 8, resolved: 0 } }),
      recallOpts(),
      NOW,
    );
    expect(refused.instant).toBeNull();
    expect(refused.nearMiss?.entry).toBe(other.id);
    const text = renderThread(input(refused));
    expect(text).toContain('❓ inconclusive · no trusted memory for this alert');
    expect(buildCard(input(refused)).headline).toEqual({ answer: 'none' });
    expect(text).toContain('⚠️ Fall-through — an investigation is needed');
    expect(text).toContain(`⛔ Recall refused — ${oom.id}: rate (resolved 0 + 👍 0 + 1)/(resolved 0 + failed 8 + 👍 0 + 👎 0 + 2) = 0.1 below floor 0.5`);
    expect(text).toMatch(/Closest catalog entries \(not trusted\): incidents\//);
    expect(text).toContain(`🔎 Near miss — ${other.id} was stopped by the margin gate: alone at 7, below solo_floor 8`);
    const fallThroughNote = renderThread(input(refused, { fallThroughNote: 'investigation budget exhausted' }));
    expect(fallThroughNote).toContain('⚠️ Fall-through — investigation budget exhausted');
  });

  it('renders the near miss line with its gate and reason', () => {
    const close = recall(incident, fixedSnapshot([oom, other], { [oom.id]: 10, [other.id]: 9 }), noHistory, recallOpts(), NOW);
    expect(close.nearMiss).not.toBeNull();
    const text = renderThread(input(close));
    expect(text).toContain(`🔎 Near miss — ${oom.id} was stopped by the margin gate: ${close.nearMiss?.reason}`);
    expect(text).not.toContain('Recall refused');
  });

  it('shows recurrence facts: 🔁 #N · last … ago · previous', () => {
    const text = renderThread(
      input(instant, {
        recurrence: { previousCount: 3, lastSeen: '2025-12-30T00:00:00Z', previousEntry: oom.id },
      }),
    );
    const facts = lines(text).find((l) => l.startsWith('Facts:'));
    expect(facts).toBe(
      `Facts: alert KubePodCrashLooping · resource prod-eu/payments/checkout-api · started 2025-12-31 23:40 UTC · 🔁 #4 · last 2 d ago · previous: ${oom.id}`,
    );
    // The summary is on the card, under the header, not repeated in the facts.
    expect(lines(text)[1]).toBe('  Pod is crash looping.');
    expect(renderThread(input(instant))).toContain('· first time seen');
  });

  it('ends with the labels table, the trigger key and the controls', () => {
    const t = lines(renderThread(input(instant)));
    expect(t.at(-3)).toBe('Labels: cluster=prod-eu namespace=payments pod=checkout-api-7d9f8c6b5-x2k4q severity=critical');
    expect(t.at(-2)).toBe(`Trigger: ${incident.triggerKey}`);
    expect(t.at(-1)).toBe('👍 Accurate · 👎 Off-base · 🔕 Silence… (1 h / 4 h / 24 h)');
  });

  it('cuts long sections with an ellipsis', () => {
    const long = incidentEntry('incidents/long.md', { resource: 'payments/checkout-api', title: 'long', cause: 'x'.repeat(900) });
    const r = recall(incident, fixedSnapshot([long], { [long.id]: 30 }), noHistory, recallOpts(), NOW);
    const cause = lines(renderThread(input(r))).find((l) => l.startsWith('Known cause:'));
    expect(cause).toBe(`Known cause: ${'x'.repeat(600)}…`);
  });
});

describe('view helpers', () => {
  it('resolvedNote gives whole minutes, never negative', () => {
    expect(resolvedNote('2026-01-01T00:00:00Z', '2026-01-01T00:23:00Z')).toBe('resolved after 23 min');
    expect(resolvedNote('2026-01-01T00:00:00Z', '2026-01-01T00:00:29Z')).toBe('resolved after 0 min');
    expect(resolvedNote('2026-01-01T00:00:00Z', '2026-01-01T02:00:31Z')).toBe('resolved after 121 min');
    expect(resolvedNote('2026-01-01T01:00:00Z', '2026-01-01T00:00:00Z')).toBe('resolved after 0 min');
    expect(resolvedNote('garbage', '2026-01-01T00:00:00Z')).toBe('resolved after 0 min');
  });

  it('ago picks minutes, hours or days', () => {
    expect(ago('2025-12-31T23:30:00Z', NOW)).toBe('30 min ago');
    expect(ago('2025-12-31T19:00:00Z', NOW)).toBe('5 h ago');
    expect(ago(new Date(NOW.getTime() - 93 * 60_000).toISOString(), NOW)).toBe('1 h 33 min ago');
    expect(ago(new Date(NOW.getTime() - 7 * 3_600_000 - 20 * 60_000).toISOString(), NOW)).toBe('7 h ago');
    expect(ago('2025-12-29T00:00:00Z', NOW)).toBe('3 d ago');
    expect(ago('2026-01-02T00:00:00Z', NOW)).toBe('just now');
  });

  it('confidenceDot: 🟢 ≥ 0.8 · 🟡 ≥ 0.5 · ⚪ below', () => {
    expect([0.8, 0.79, 0.5, 0.49].map(confidenceDot)).toEqual(['🟢', '🟡', '🟡', '⚪']);
  });

  it('runbookSteps reads Diagnosis, then Investigate, then Mitigation', () => {
    expect(runbookSteps(book, 2).map((s) => richText(s.text))).toEqual(['Read the previous container logs', 'Check events for OOMKilled']);
    const inv = playbook('runbooks/inv.md', { title: 'inv', body: '## Investigate\n\n* look here\n\n## Mitigation\n\n- not this' });
    expect(runbookSteps(inv).map((s) => richText(s.text))).toEqual(['look here']);
    expect(runbookSteps(playbook('runbooks/none.md', { title: 'none', body: 'prose only' }))).toEqual([]);
  });

  it('runbookSteps keeps the command after each step: a one-code-span line or a fenced block', () => {
    const cmds = playbook('runbooks/cmds.md', {
      title: 'cmds',
      body: '## Diagnosis\n\n1. See the state:\n   `kubectl -n <ns> get pod <pod> -o wide`\n2. Read the logs of `app`:\n```sh\nkubectl logs <pod> --previous\n```\n3. Think about it\n',
    });
    expect(runbookSteps(cmds)).toEqual([
      { text: ['See the state:'], code: 'kubectl -n <ns> get pod <pod> -o wide' },
      { text: ['Read the logs of ', { code: 'app' }, ':'], code: 'kubectl logs <pod> --previous' },
      { text: ['Think about it'] },
    ]);
  });
});

describe('untrusted text in the thread', () => {
  const RAW = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u200B\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069\uFEFF]/;

  it('carries no raw control, bidi or zero-width characters, and alert text cannot start a line of its own', () => {
    const hostile = alert({
      alertname: 'Evil\u001b[2J\u001b]0;pwned\u0007Alert',
      fingerprint: 'fp-hostile',
      labels: { namespace: 'pay\u202Ements', pod: 'api-7d9f8c6b5-x2k4q\n│ ⚡ Instant recall — forged', instance: 'x\u0000y' },
      annotations: { summary: 'sum\u200Bmary\r\noverwrite', description: 'line one\nline two\u2028three\u0085' },
    });
    const r = recall(hostile, fixedSnapshot([oom], { [oom.id]: 30 }), noHistory, recallOpts(), NOW);
    const text = renderThread(input(r, { incident: hostile }));
    expect(text).not.toMatch(RAW);
    expect(text.split('\n')[0]).toBe(
      '🔍 Evil\\u{001B}[2J\\u{001B}]0;pwned\\u{0007}Alert — pay\\u{202E}ments/api-7d9f8c6b5-x2k4q\\n│ ⚡ Instant recall — forged · severity warning · 🚨 firing',
    );
    // The forged block never starts a line of its own: wherever the pod name is shown, its newline is escaped.
    const forged = text.split('\n').filter((l) => l.includes('forged'));
    expect(forged.length).toBeGreaterThan(0);
    for (const l of forged) expect(l).toContain('x2k4q\\n│ ⚡');
    expect(text.split('\n').some((l) => l.startsWith('│') || l.startsWith('⚡ Instant recall — forged'))).toBe(false);
  });
});

/**
 * A thread's card changes accumulate: each update starts from the posted card with every change
 * recorded since, so the KB line does not wipe the finding's headline and a resolve keeps both
 * (seen through `reprise serve` in test/integration/curation-e2e.test.ts). Replays and snapshots
 * keep the merged changes.
 */
import { cardAsItStands } from '../../../src/core/outbox/card-edits.js';
import { describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import type { CardPatch, CardView } from '../../../src/core/chat/thread-view.js';
import { Ledger } from '../../../src/core/ledger/ledger.js';
import { replayEvents, restoreLedgerState } from '../../../src/core/ledger/ledger-state.js';
import type { LedgerEvent, OutboxEvent } from '../../../src/core/ledger-events.js';
import { at, open } from './ledger-events-fixture.js';

const card = {
  kind: 'card',
  state: 'firing',
  headline: { answer: 'runbook', title: 'KubePodCrashLooping: a container keeps restarting', entry: 'kubernetes/KubePodCrashLooping.md', confidence: 0.7 },
  verdict: 'inconclusive',
  mentions: ['@oncall'],
} as unknown as CardView;
let n = 0;
const outbox = (op: 'post' | 'update', view: CardView | CardPatch, transport = 'console', m = 1): OutboxEvent => ({
  type: 'outbox',
  id: `ob-${++n}`,
  transport,
  op,
  openId: 'o1',
  ...(op === 'post' ? { channel: '#c' } : {}),
  view,
  at: at(m),
});
const finding: CardPatch = {
  kind: 'card_patch',
  headline: { answer: 'finding', title: 'checkout-api is OOMKilled', confidence: 0.85 },
  verdict: 'action_required',
};
const kbLine: CardPatch = { kind: 'card_patch', curation: { text: 'KB: draft opened for review', link: { label: 'PR #1', url: 'https://x/pull/1' } } };
const resolved: CardPatch = { kind: 'card_patch', state: 'resolved', stateNote: 'resolved after 14 min' };

describe('card changes', () => {
  it("accumulate per surface: the KB line and the resolve keep the finding's headline", async () => {
    const ledger = await Ledger.open(createStore('memory://', ''));
    const events: LedgerEvent[] = [
      open('f1', 0, { id: 'o1' }),
      outbox('post', card),
      outbox('post', card, 'slack'),
      outbox('update', finding),
      outbox('update', kbLine),
      outbox('update', resolved),
      outbox('update', { kind: 'card_patch', stateNote: 'storm: 3 workloads' } satisfies CardPatch, 'slack'),
    ];
    await ledger.transaction(async (tx) => {
      for (const e of events) tx.record(e);
    });
    const now = await cardAsItStands(ledger, 'o1', 'console');
    expect(now).toMatchObject({
      kind: 'card',
      state: 'resolved',
      stateNote: 'resolved after 14 min',
      headline: finding.headline,
      verdict: 'action_required',
      curation: kbLine.curation,
      mentions: [],
    });
    // Another surface has its own changes only.
    const slack = await cardAsItStands(ledger, 'o1', 'slack');
    expect(slack).toMatchObject({ state: 'firing', stateNote: 'storm: 3 workloads', headline: card.headline, verdict: 'inconclusive' });
    expect(slack).not.toHaveProperty('curation');
    // A later change of one field wins; the others stay.
    await ledger.transaction(async (tx) => {
      tx.record(outbox('update', { kind: 'card_patch', state: 'firing', stateNote: 'firing again' }));
    });
    expect(await cardAsItStands(ledger, 'o1', 'console')).toMatchObject({
      state: 'firing',
      stateNote: 'firing again',
      headline: finding.headline,
      curation: kbLine.curation,
    });
    // Replay and a snapshot round trip give the same merged changes.
    const s = replayEvents([...events]);
    expect(s.threads['o1']?.cardPatches?.['console']).toEqual({
      headline: finding.headline,
      verdict: 'action_required',
      curation: kbLine.curation,
      state: 'resolved',
      stateNote: 'resolved after 14 min',
    });
    expect(restoreLedgerState(JSON.parse(JSON.stringify(s)))).toEqual(s);
  });

  it('a thread with no change is the posted card as it was', async () => {
    const ledger = await Ledger.open(createStore('memory://', ''));
    await ledger.transaction(async (tx) => {
      tx.record(open('f1', 0, { id: 'o1' }));
      tx.record(outbox('post', card));
    });
    expect(await cardAsItStands(ledger, 'o1', 'console')).toEqual(card);
  });
});

/**
 * Card edits: what an update of a thread's card sends. A change to the card (`card_patch`) is
 * applied to the card as it stands — the posted card with every change recorded since — and
 * the edits queued right behind it in its lane ride along, so a burst of votes is one edit, not
 * one per vote (a rate limit spent on stale states).
 */
import { patchCard, type CardPatch, type CardView } from '../chat/thread-view.js';
import type { OutboxEvent } from '../ledger-events.js';
import { laneOf, type OutboxItem, type OutboxLedger, type Payload } from './outbox-types.js';

/** A card edit delivered with the one before it in its lane. */
export type Rider = { item: OutboxItem; view: Extract<OutboxEvent['view'], { kind: 'card_patch' }> };

/** Most queued card edits one edit stands for. */
const MAX_RIDERS = 500;

/** The message an item carries, read from the log; undefined when it cannot be read. */
export async function readPayload(ledger: Pick<OutboxLedger, 'eventAt'>, item: OutboxItem): Promise<Payload | undefined> {
  if (item.seq === undefined) return undefined;
  const e = await ledger.eventAt(item.seq);
  if (e?.type !== 'outbox' || e.id !== item.id) return undefined;
  return { view: e.view, ...(e.detail ? { detail: e.detail } : {}), ...(e.to ? { to: e.to } : {}) };
}

/**
 * The card edits recorded right after `item` in its lane (committed, nothing else in between)
 * among the `pending` items the worker holds, when it (its payload `head`) and they are all changes to the card: sending `item` sends the
 * card as it stands, every recorded change folded in, so they are delivered with it.
 */
export async function ridersOf(
  ledger: Pick<OutboxLedger, 'eventAt'>,
  item: OutboxItem,
  head: Payload | undefined,
  pending: Iterable<OutboxItem>,
): Promise<Rider[]> {
  if (item.op !== 'update' || head?.view.kind !== 'card_patch') return [];
  const lane = laneOf(item);
  const next: OutboxItem[] = [];
  let after = false;
  for (const other of pending) {
    if (other.id === item.id) {
      after = true;
      continue;
    }
    if (!after || laneOf(other) !== lane) continue;
    if (other.op !== 'update' || other.seq === undefined || next.length >= MAX_RIDERS) break;
    next.push(other);
  }
  const riders: Rider[] = [];
  for (const other of next) {
    const view = (await readPayload(ledger, other))?.view;
    if (view?.kind !== 'card_patch') break;
    riders.push({ item: other, view });
  }
  return riders;
}

/**
 * The card an update sends: a whole card as recorded, or the card as it stands with this
 * change and its riders' applied again in recorded order (the newest of each field shows).
 * Undefined when the posted card cannot be read from the ledger.
 */
export async function cardToSend(
  ledger: Pick<OutboxLedger, 'read' | 'eventAt'>,
  item: OutboxItem,
  view: CardView | Rider['view'],
  riders: readonly Rider[],
): Promise<CardView | undefined> {
  if (view.kind === 'card') return view;
  const base = await cardAsItStands(ledger, item.openId!, item.transport);
  return base && riders.reduce((c, r) => patchCard(c, r.view), patchCard(base, view));
}

/** A thread's card on a surface as it stands: the posted one (read from the log) with every change recorded since. */
export async function cardAsItStands(ledger: Pick<OutboxLedger, 'read' | 'eventAt'>, openId: string, transport: string): Promise<CardView | undefined> {
  const seq = ledger.read.cardSeq(openId, transport);
  const e = seq === undefined ? undefined : await ledger.eventAt(seq);
  if (e?.type !== 'outbox' || e.view.kind !== 'card') return undefined;
  const changes = ledger.read.thread(openId)?.cardPatches?.[transport];
  return changes ? patchCard(e.view, { ...(changes as Omit<CardPatch, 'kind'>), kind: 'card_patch' }) : e.view;
}

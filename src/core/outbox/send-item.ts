/**
 * One outbox item to its surface: the call its op makes (post, private answer, reply, card
 * edit) with the message it carries, every call keyed by the item's id.
 */
import type { ChatTransport } from '../../ports/chat-transport.js';
import type { SentMessage, Transcript } from '../../ports/transcript.js';
import { DeliveryError, type MessageRef } from '../chat/chat-types.js';
import { withNames, type PeopleNames } from '../people.js';
import { cardToSend, type Rider } from './card-edits.js';
import { rootOf, type OutboxItem, type OutboxLedger, type Payload } from './outbox-types.js';

/**
 * Sends `item` (its `payload` read once from the log; undefined when it could not be read) with
 * the card edits riding along, people's display names filled in from what `people` knows now
 * (never waited for), and records what the surface took in the transcript. The message made,
 * for a post or reply; a non-retryable `DeliveryError` when the item cannot be sent at all.
 */
export async function sendItem(
  ledger: Pick<OutboxLedger, 'read' | 'eventAt'>,
  transport: ChatTransport,
  item: OutboxItem,
  payload: Payload | undefined,
  riders: readonly Rider[] = [],
  extras: { people?: PeopleNames | undefined; transcript?: Transcript | undefined } = {},
): Promise<MessageRef | undefined> {
  const opts = { idempotencyKey: item.id };
  if (!payload) throw new DeliveryError(`the message of outbox item ${item.id} cannot be read from the ledger`, { retryable: false });
  const { people, transcript } = extras;
  const view = withNames(payload.view, people);
  const malformed = (): DeliveryError => new DeliveryError(`outbox item ${item.id} (${item.op}) carries a ${view.kind} view`, { retryable: false });
  const thread = item.openId === undefined ? undefined : ledger.read.thread(item.openId);
  const sent = (m: Omit<SentMessage, 'transport' | 'op' | 'triggerKey'>): void =>
    transcript?.record({ transport: item.transport, op: item.op, ...(thread ? { triggerKey: thread.triggerKey } : {}), ...m });
  switch (item.op) {
    case 'post': {
      if (view.kind !== 'card') throw malformed();
      const detail = payload.detail?.kind === 'detail' ? withNames(payload.detail, people) : undefined;
      const ref = await transport.post({ transport: item.transport, channel: item.channel ?? '' }, view, detail, opts);
      sent({ root: ref, view, ...(detail ? { detail } : {}) });
      return ref;
    }
    case 'answer':
      if (view.kind !== 'ephemeral' || !payload.to) throw malformed();
      await transport.ephemeral(payload.to, view, opts);
      sent({ ...(payload.to.kind === 'thread' ? { root: payload.to.ref } : {}), view });
      return undefined;
    case 'reply':
    case 'update': {
      const root = rootOf(ledger.read, item.openId!, item.transport)!;
      const ref: MessageRef = { transport: item.transport, channel: root.channel, id: root.id };
      if (item.op === 'reply') {
        if (view.kind !== 'detail' && view.kind !== 'notice') throw malformed();
        const out = await transport.reply(ref, view, opts);
        sent({ root: ref, view });
        return out;
      }
      if (view.kind !== 'card' && view.kind !== 'card_patch') throw malformed();
      const built = await cardToSend(ledger, item, view, riders);
      if (!built) throw new DeliveryError(`the card of thread ${item.openId} on ${item.transport} cannot be read from the ledger`, { retryable: false });
      const card = withNames(built, people);
      await transport.update(ref, card, opts);
      sent({ root: ref, view: card });
      return undefined;
    }
  }
}

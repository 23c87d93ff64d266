/**
 * One outbox item to its surface: the call its op makes (post, private answer, reply, card
 * edit) with the message it carries, every call keyed by the item's id.
 */
import type { ChatTransport } from '../../ports/chat-transport.js';
import { DeliveryError, type MessageRef } from '../chat/chat-types.js';
import { cardToSend, type Rider } from './card-edits.js';
import { rootOf, type OutboxItem, type OutboxLedger, type Payload } from './outbox-types.js';

/**
 * Sends `item` (its `payload` read once from the log; undefined when it could not be read) with
 * the card edits riding along. The message made, for a post or reply; a non-retryable
 * `DeliveryError` when the item cannot be sent at all.
 */
export async function sendItem(
  ledger: Pick<OutboxLedger, 'read' | 'eventAt'>,
  transport: ChatTransport,
  item: OutboxItem,
  payload: Payload | undefined,
  riders: readonly Rider[] = [],
): Promise<MessageRef | undefined> {
  const opts = { idempotencyKey: item.id };
  if (!payload) throw new DeliveryError(`the message of outbox item ${item.id} cannot be read from the ledger`, { retryable: false });
  const { view } = payload;
  const malformed = (): DeliveryError => new DeliveryError(`outbox item ${item.id} (${item.op}) carries a ${view.kind} view`, { retryable: false });
  switch (item.op) {
    case 'post':
      if (view.kind !== 'card') throw malformed();
      return transport.post(
        { transport: item.transport, channel: item.channel ?? '' },
        view,
        payload.detail?.kind === 'detail' ? payload.detail : undefined,
        opts,
      );
    case 'answer':
      if (view.kind !== 'ephemeral' || !payload.to) throw malformed();
      await transport.ephemeral(payload.to, view, opts);
      return undefined;
    case 'reply':
    case 'update': {
      const root = rootOf(ledger.read, item.openId!, item.transport)!;
      const ref: MessageRef = { transport: item.transport, channel: root.channel, id: root.id };
      if (item.op === 'reply') {
        if (view.kind !== 'detail' && view.kind !== 'notice') throw malformed();
        return transport.reply(ref, view, opts);
      }
      if (view.kind !== 'card' && view.kind !== 'card_patch') throw malformed();
      const card = await cardToSend(ledger, item, view, riders);
      if (!card) throw new DeliveryError(`the card of thread ${item.openId} on ${item.transport} cannot be read from the ledger`, { retryable: false });
      await transport.update(ref, card, opts);
      return undefined;
    }
  }
}

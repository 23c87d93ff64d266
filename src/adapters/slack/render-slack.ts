/**
 * Reprise's thread views as Slack messages (pure: no I/O). The card is the thread root, the
 * detail and notices are replies, an ephemeral view answers one user.
 */
import type { ReplyView } from '../../core/chat/thread-view.js';
import { renderDetail, renderNotice } from './render-slack-detail.js';
import type { SlackMessage } from './slack-message.js';

export { renderCard } from './render-slack-card.js';
export { renderDetail, renderEphemeral, renderNotice } from './render-slack-detail.js';
export { type SlackMessage } from './slack-message.js';

/** A thread reply: the full analysis or a short notice. */
export function renderReply(view: ReplyView): SlackMessage {
  return view.kind === 'detail' ? renderDetail(view) : renderNotice(view);
}

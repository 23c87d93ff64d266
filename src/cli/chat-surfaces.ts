/**
 * Slack and Matrix, built from config. Loaded only when one is configured, so a console-only
 * bot never pays for the chat SDKs.
 */
import type { Config } from '../config/schema.js';
import type { RoutedTransport } from '../core/bot/routing.js';
import type { HttpApp } from '../http/create-server.js';
import type { ChatTransport } from '../ports/chat-transport.js';
import type { SurfaceDeps } from './build-surfaces.js';

export async function chatSurfaces(_config: Config, _deps: SurfaceDeps): Promise<{ transports: ChatTransport[]; routed: RoutedTransport[]; mounts: Array<(app: HttpApp) => void> }> {
  throw new Error('Slack and Matrix transports are not in this build yet; unset SLACK_* and MATRIX_* (transport.slack / transport.matrix) to run on the console');
}

/**
 * The inbox in front of the loop, chosen once, where the store is opened: the embedded store
 * has one writer, which runs the loop itself (`LocalInbox`); a store several replicas share
 * (Redis) has a leader that drains what every replica recorded (`SharedInbox`).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Config } from '../config/schema.js';
import type { Inbox } from '../core/inbox/inbox.js';
import { LocalInbox } from '../core/inbox/local-inbox.js';
import { SharedInbox } from '../core/replica/shared-inbox.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { KeyValueStore } from '../ports/store.js';
import { isSharedStore } from './open-store.js';

/** This process, as a lease owner and in the inbox items it records. */
export function replicaId(): string {
  return `${hostname().replace(/\|/g, '_')}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

export function openInbox(config: Config, store: KeyValueStore, clock: Clock, logger: Logger): Inbox {
  if (!isSharedStore(config)) return new LocalInbox(clock);
  return new SharedInbox({ store, clock, logger, id: replicaId(), leaseTtlMs: config.store.lease_ttl_ms });
}

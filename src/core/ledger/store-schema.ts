/**
 * The store's schema version (issue 7 item 6): which layout of keys and records a store holds,
 * recorded under {@link STORE_SCHEMA_KEY}, and the migrations that bring an older store up to
 * the layout this build writes.
 *
 * - Version 0 is a store written before the version was recorded (no key, but ledger records):
 *   the same keys and records as version 1, so its only step records the number.
 * - A store claiming a version newer than {@link STORE_SCHEMA_VERSION} was written by a newer
 *   build: it is refused (reading it could misread records; writing could damage them).
 * - A change to the layout adds one step `N → N+1` to {@link STORE_MIGRATIONS} and bumps the
 *   version; the writer (`serve`, or a CLI command holding the store lock) runs the pending
 *   steps in order before its first write, recording the version after each one, so a step cut
 *   short by a crash runs again at the next start (every step must be safe to run twice).
 */
import { RepriseError } from '../errors.js';
import type { KeyValueStore } from '../../ports/store.js';
import { HEAD_KEY, SNAPSHOT_KEY } from './ledger-records.js';

/** The layout this build reads and writes. */
export const STORE_SCHEMA_VERSION = 2;
/** Where the version lives (beside `seq`, `snap` and `ev:…`; never an event). */
export const STORE_SCHEMA_KEY = 'meta:schema';

/**
 * Set by `reprise ledger import` before its first write, removed once the imported store
 * verifies: a store that still holds it was left half-imported (a kill -9, a power cut) and is
 * refused by every open rather than served with part of its history.
 */
export const IMPORT_MARKER_KEY = 'meta:import';

export interface ImportMarker {
  startedAt: string;
  /** Events the file holds. */
  events: number;
}

/** Refuses a store an import began and never finished. */
export async function assertNoUnfinishedImport(store: KeyValueStore): Promise<void> {
  const m = await store.get<ImportMarker>(IMPORT_MARKER_KEY);
  if (m === undefined) return;
  const message =
    `an import into this store began at ${String(m?.startedAt ?? '?')} (${String(m?.events ?? '?')} events) and never finished, so it holds only part of that ledger. ` +
    'Empty the store (move the store file away, or delete the reprise:* keys in Redis) and run `reprise ledger import` again';
  throw new RepriseError('unavailable', message, { userMessage: message });
}

/** What {@link STORE_SCHEMA_KEY} holds. */
export interface StoreSchemaRecord {
  version: number;
  /** When this version was recorded. */
  at: string;
  /** The steps that brought the store here, oldest first (absent on a store created at this version). */
  migrated?: Array<{ from: number; to: number; at: string }>;
}

/** One step of the layout, `from` → `from + 1`. */
export interface StoreMigration {
  from: number;
  to: number;
  /** One line for the log and `ledger verify`. */
  description: string;
  /**
   * True when this build reads a store still at `from` correctly as it is (the step only adds
   * or records something): read-only commands then work on a store nobody migrated yet.
   */
  readsUnmigrated: boolean;
  /** Rewrites what the step changes. Runs under the store's single writer; must be safe to run again. */
  run(ctx: MigrationContext): Promise<void>;
}

export interface MigrationContext {
  store: KeyValueStore;
  /** Writes a key the way the writer must (fenced on a shared store). */
  write(key: string, value: unknown): Promise<void>;
  /** The clock a step records times with (the one {@link migrateStoreSchema} was given). */
  now?: () => Date;
}

/**
 * Where version 2 records the ledger position its trigger keys start from (beside the version;
 * never an event): events up to `lastV1Seq` carry the keys of the identity before it.
 */
export const IDENTITY_KEY = 'meta:identity';

/** What {@link IDENTITY_KEY} holds. */
export interface IdentityRecord {
  /** The identity the store's new events are keyed by (2: hosts, scrape jobs, Grafana rules, PagerDuty services, `identity.labels`). */
  version: number;
  /** The last event written with the previous identity's keys (0: none). */
  lastV1Seq: number;
  at: string;
}

/**
 * Version 2: trigger keys of every kind of alert (issue 19). Kubernetes keys are unchanged, so
 * their history, silences, votes and cooldowns carry on as they were. The keys of other alerts
 * (hosts, scrape jobs, Grafana rules, PagerDuty services) were coarser before — every host of one
 * alert shared a key — and cannot be recomputed: the ledger keeps trigger keys, not the labels
 * they came from. So nothing is rewritten (the log is append-only, its history true to what was
 * shown then): the step records where the new keys begin. Old coarse keys stay readable
 * (`reprise incident show`, `ledger events`); new alerts start their own history, and a 🔕 set
 * on an old coarse key no longer matches them. The version also stops an older build, which
 * would merge hosts again, from writing to the store.
 */
const identityV2: StoreMigration = {
  from: 1,
  to: 2,
  description:
    'trigger keys for every kind of alert (hosts, scrape jobs, Grafana rules, PagerDuty services): Kubernetes keys are unchanged; older keys of other alerts cannot be recomputed from the ledger and are kept as written, so those alerts start a new history; records where the new keys begin',
  readsUnmigrated: true,
  run: async (ctx) => {
    if ((await ctx.store.get<unknown>(IDENTITY_KEY)) !== undefined) return;
    const head = await ctx.store.get<unknown>(HEAD_KEY);
    const lastV1Seq = typeof head === 'number' && Number.isSafeInteger(head) && head > 0 ? head : 0;
    await ctx.write(IDENTITY_KEY, { version: 2, lastV1Seq, at: (ctx.now ?? (() => new Date()))().toISOString() } satisfies IdentityRecord);
  },
};

/** Every step from the first recorded layout to {@link STORE_SCHEMA_VERSION}. */
export const STORE_MIGRATIONS: readonly StoreMigration[] = [
  {
    from: 0,
    to: 1,
    description: 'a store written before its schema version was recorded: same keys and records as version 1; records the version',
    readsUnmigrated: true,
    run: async () => {},
  },
  identityV2,
];

/** What a store says about its layout. */
export interface StoreSchemaStatus {
  /** The version the store is at (0: ledger records but no version; the current one for an empty store). */
  version: number;
  /** Whether the version is recorded in the store. */
  recorded: boolean;
  /** True when the store holds no ledger record (no head, no snapshot). */
  empty: boolean;
  /** Steps still to run to reach the version this build writes, in order. */
  pending: StoreMigration[];
}

/** The error a store written by a newer build (or holding a damaged version record) is refused with. */
export function storeSchemaError(message: string, version?: number): RepriseError {
  return new RepriseError('unavailable', message, {
    userMessage: message,
    ...(version === undefined ? {} : { details: { storeSchema: version, known: STORE_SCHEMA_VERSION } }),
  });
}

/**
 * The steps from `from` to `to`, in order.
 * @throws when the registry lacks a step (a build that bumped the version without its migration).
 */
export function migrationPath(from: number, to: number = STORE_SCHEMA_VERSION, registry: readonly StoreMigration[] = STORE_MIGRATIONS): StoreMigration[] {
  const steps: StoreMigration[] = [];
  for (let v = from; v < to; v++) {
    const step = registry.find((m) => m.from === v);
    if (!step || step.to !== v + 1) throw new RepriseError('internal', `no migration of the store schema from version ${v} to ${v + 1} in this build`);
    steps.push(step);
  }
  return steps;
}

/**
 * Reads the store's version without writing anything.
 * @throws RepriseError when the store claims a version newer than `known` ("upgrade reprise"),
 *   or its version record is not one.
 */
export async function readStoreSchema(
  store: KeyValueStore,
  known: number = STORE_SCHEMA_VERSION,
  registry: readonly StoreMigration[] = STORE_MIGRATIONS,
): Promise<StoreSchemaStatus> {
  const raw = await store.get<unknown>(STORE_SCHEMA_KEY);
  const empty = (await store.get<unknown>(HEAD_KEY)) === undefined && (await store.get<unknown>(SNAPSHOT_KEY)) === undefined;
  if (raw === undefined) {
    const version = empty ? known : 0;
    return { version, recorded: false, empty, pending: migrationPath(version, known, registry) };
  }
  const version = (raw as Partial<StoreSchemaRecord> | null)?.version;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0) {
    throw storeSchemaError(
      `the store's schema record "${STORE_SCHEMA_KEY}" is damaged (${JSON.stringify(raw).slice(0, 80)}): restore the store from a backup, or delete that key if you know the store was written by this version of reprise`,
    );
  }
  if (version > known) {
    throw storeSchemaError(
      `this store is at schema version ${version}, written by a newer reprise; this build knows versions up to ${known}. ` +
        `Upgrade reprise to the version that wrote it (or newer), or restore a backup taken before that upgrade.`,
      version,
    );
  }
  return { version, recorded: true, empty, pending: migrationPath(version, known, registry) };
}

/**
 * For a reader: refuses a newer store, and an older one this build cannot read until the writer
 * migrates it. Writes nothing.
 */
export async function checkStoreSchemaForReading(
  store: KeyValueStore,
  known: number = STORE_SCHEMA_VERSION,
  registry: readonly StoreMigration[] = STORE_MIGRATIONS,
): Promise<StoreSchemaStatus> {
  await assertNoUnfinishedImport(store);
  const status = await readStoreSchema(store, known, registry);
  const blocking = status.pending.find((m) => !m.readsUnmigrated);
  if (blocking) {
    throw storeSchemaError(
      `this store is at schema version ${status.version} and must be migrated (${blocking.description}) before this build can read it: ` +
        `start \`reprise serve\` on it once (it migrates before its first write), then run this again`,
      status.version,
    );
  }
  return status;
}

/**
 * For the store's writer: runs the pending steps in order, recording the version after each one
 * (an empty store just records the current version). Resolves with the steps run.
 * @throws like {@link readStoreSchema}, or with the error of a failed step (the version stays at the last step done).
 */
export async function migrateStoreSchema(
  ctx: MigrationContext,
  now: () => Date = () => new Date(),
  known: number = STORE_SCHEMA_VERSION,
  registry: readonly StoreMigration[] = STORE_MIGRATIONS,
): Promise<StoreMigration[]> {
  const status = await readStoreSchema(ctx.store, known, registry);
  if (status.recorded && status.pending.length === 0) return [];
  if (status.pending.length === 0) {
    await ctx.write(STORE_SCHEMA_KEY, { version: status.version, at: now().toISOString() } satisfies StoreSchemaRecord);
    return [];
  }
  const previous = status.recorded ? await ctx.store.get<StoreSchemaRecord>(STORE_SCHEMA_KEY) : undefined;
  const migrated = [...(previous?.migrated ?? [])];
  for (const step of status.pending) {
    await step.run({ ...ctx, now: ctx.now ?? now });
    const at = now().toISOString();
    migrated.push({ from: step.from, to: step.to, at });
    await ctx.write(STORE_SCHEMA_KEY, { version: step.to, at, migrated } satisfies StoreSchemaRecord);
  }
  return status.pending;
}

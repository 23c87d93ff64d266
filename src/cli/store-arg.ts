/**
 * `--store` of the commands that read the ledger beside a running bot (`recall`, `incident
 * show`): a store URL (`sqlite:///…/reprise.sqlite`, `redis://…`) or a path — a data dir (the
 * bot's `store.data_dir`, whose `reprise.sqlite` and catalog clone are read) or a store file.
 * Only ever read: a store that is not there is an error, never created.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { embeddedStoreFile } from '../adapters/keyv/keyv-store.js';
import type { Config } from '../config/schema.js';
import type { CliIO } from '../runtime/cli-io.js';

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** The config with `--store` applied, or `{ exit: 2 }` after saying what is wrong with it. */
export function storeArg(value: string | undefined, config: Config, io: CliIO, command: string): { config: Config } | { exit: number } {
  if (value === undefined) return { config };
  const v = value.trim();
  const refuse = (why: string): { exit: number } => {
    io.stderr(`${command}: ${why}; check --store (it only reads a store, it never creates one)\n`);
    return { exit: 2 };
  };
  if (v === '') return refuse('--store is empty');
  let store: Config['store'];
  if (SCHEME.test(v)) {
    store = { ...config.store, url: v };
  } else {
    const path = resolve(io.cwd, v);
    if (!existsSync(path)) return refuse(`no data dir or store file at ${path}`);
    store = statSync(path).isDirectory() ? { ...config.store, url: undefined, data_dir: path } : { ...config.store, url: `sqlite://${path}` };
  }
  const file = embeddedStoreFile(store.url, store.data_dir);
  if (file !== undefined && !existsSync(file)) return refuse(`no ledger at ${file}`);
  return { config: { ...config, store } };
}

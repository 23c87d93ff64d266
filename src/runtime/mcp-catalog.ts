/**
 * The catalog `reprise mcp` serves. A folder is read once at start, as `serve` reads one. The
 * running bot's git clone is followed: when its HEAD moved (the bot fetched), the folder is
 * indexed again. Nothing here fetches or writes the clone: the bot owns it.
 */
import { resolve } from 'node:path';
import { GitMirror } from '../adapters/git/git-mirror.js';
import type { Config } from '../config/schema.js';
import type { CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import type { Logger } from '../ports/logger.js';
import { loadSnapshot } from './open-catalog.js';
import { servedCatalogFolder } from './served-catalog.js';

export interface McpCatalog {
  readonly folder: string;
  current(): CatalogSnapshot;
  stop(): void;
}

/**
 * The catalog folder: `--catalog`, else the bot's git clone when `catalog.git` is set, else
 * `catalog.dir` (the bundled starter catalog when the default `catalog` folder does not exist,
 * as `serve` does). A string is the reason it cannot be served, with the fix.
 */
export function mcpCatalogFolder(flag: string | undefined, config: Config, cwd: string): { folder: string; clone?: string } | string {
  const served = servedCatalogFolder(config, flag === undefined ? undefined : resolve(cwd, flag));
  if (typeof served === 'string') return flag === undefined ? served : `${served}; pass --catalog DIR or set catalog.dir in --config`;
  return { folder: served.dir, ...(served.clone ? { clone: served.clone } : {}) };
}

/** Loads the folder; with `clone`, re-indexes it every `pollMs` when the clone's HEAD moved. */
export async function openMcpCatalog(where: { folder: string; clone?: string }, config: Config, logger: Logger): Promise<McpCatalog> {
  const load = async (): Promise<CatalogSnapshot> => {
    const { snapshot, skipped } = await loadSnapshot(where.folder);
    for (const p of skipped) logger.warn({ file: p.file, line: p.line, rule: p.rule }, `catalog entry skipped: ${p.message}`);
    logger.info({ catalog: where.folder, entries: snapshot.entries.length }, 'catalog indexed');
    return snapshot;
  };
  let current = await load();
  const git = config.catalog.git;
  if (!where.clone || !git) return { folder: where.folder, current: () => current, stop: () => undefined };

  const mirror = new GitMirror({ url: git.url, branch: git.branch, dir: where.clone });
  let head = await mirror.localHead();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void (async () => {
      const now = await mirror.localHead();
      if (now !== undefined && now !== head) {
        current = await load();
        logger.info({ from: head, to: now }, 'catalog clone moved; re-indexed');
        head = now;
      }
    })()
      .catch((err: unknown) => logger.warn({ err }, 'catalog re-index failed; serving the previous index'))
      .finally(() => (busy = false));
  }, git.poll_interval_ms);
  timer.unref();
  return { folder: where.folder, current: () => current, stop: () => clearInterval(timer) };
}

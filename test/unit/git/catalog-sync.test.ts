/**
 * Catalog sync against real git repositories on disk (issue 6 item 2): a bare remote, pushes
 * from a work clone, and the sync service on the `simple-git` mirror.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GitMirror, GitMirrorError, maskUrl } from '../../../src/adapters/git/git-mirror.js';
import { CatalogSync } from '../../../src/core/catalog/catalog-sync.js';
import { loadCatalog } from '../../../src/core/catalog/load-catalog.js';
import type { CatalogMirror } from '../../../src/ports/catalog-mirror.js';
import { ManualClock, systemClock, type Clock } from '../../../src/ports/clock.js';
import { silentLogger } from '../../../src/ports/logger.js';
import { tokenize } from '../../../src/core/tokenize.js';
import { git, incidentEntry, makeGitRemote, type GitRemote } from '../../helpers/git-remote.js';
import { waitFor } from '../../helpers/wait-for.js';

const remotes: GitRemote[] = [];
afterEach(() => {
  for (const r of remotes.splice(0)) {
    r.cleanup();
  }
});

const WEB = incidentEntry({ title: 'web pods crash after the cache change', resource: 'prod/web', alert: 'KubePodCrashLooping' });
const API = incidentEntry({ title: 'api latency from connection pool exhaustion', resource: 'prod/api', alert: 'ApiLatencyHigh' });
const DB = incidentEntry({
  title: 'orders database disk filling with binlogs',
  resource: 'prod/orders-db',
  alert: 'DiskFilling',
  cause: 'Binlog retention was unbounded.',
});

function setup(
  files: Record<string, string> = { 'incidents/web.md': WEB, 'incidents/api.md': API, 'README.md': '# catalog\n' },
  opts: { path?: string; limit?: number; clock?: Clock } = {},
) {
  const remote = makeGitRemote(files);
  remotes.push(remote);
  const mirror = new GitMirror({ url: remote.bare, branch: 'main', dir: join(remote.root, 'data', 'catalog-clone') });
  const snapshots: string[] = [];
  const sync = new CatalogSync({
    mirror,
    clock: opts.clock ?? systemClock,
    logger: silentLogger,
    ...(opts.path ? { path: opts.path } : {}),
    ...(opts.limit !== undefined ? { incrementalLimit: opts.limit } : {}),
    onSnapshot: (_s, r) => snapshots.push(r.head),
  });
  return { remote, mirror, sync, snapshots };
}

const ids = (sync: CatalogSync) => sync.snapshot!.entries.map((e) => e.id);
const top = (sync: CatalogSync, text: string) => sync.snapshot!.index.search(tokenize(text), 3)[0]?.entry.id;

describe('catalog sync from git', () => {
  it('clones and indexes on the first sync; HEAD unchanged → no rebuild', async () => {
    const { remote, sync, snapshots } = setup();
    expect(sync.snapshot).toBeUndefined();
    expect(sync.status().indexed).toBe(false);
    const first = await sync.syncNow();
    expect(first).toMatchObject({ head: remote.head(), mode: 'full', entries: 2 });
    expect(first.oldHead).toBeUndefined();
    expect(ids(sync)).toEqual(['incidents/api.md', 'incidents/web.md']);
    const again = await sync.syncNow();
    expect(again).toMatchObject({ oldHead: remote.head(), head: remote.head(), mode: 'none', entriesChanged: 0 });
    const st = sync.status();
    expect(st).toMatchObject({ indexed: true, head: remote.head(), fetches: 2, unchanged: 1, failures: 0, rebuilds: { full: 1, incremental: 0 } });
    expect(st.lastSuccessAt).toBeDefined();
    expect(snapshots).toHaveLength(1);
  });

  it('follows pushes in place: add, modify, delete, a broken entry skipped with its reason', async () => {
    const { remote, sync } = setup();
    const h1 = (await sync.syncNow()).head;
    const h2 = remote.push({
      'incidents/db.md': DB,
      'incidents/web.md': WEB.replace('Roll back the deployment.', 'Pin the cache size to 512 MiB.'),
      'incidents/api.md': null,
    });
    const r = await sync.syncNow();
    expect(r).toMatchObject({ oldHead: h1, head: h2, mode: 'incremental', entriesChanged: 3, entries: 2 });
    expect(ids(sync)).toEqual(['incidents/db.md', 'incidents/web.md']);
    expect(top(sync, 'binlogs disk filling orders')).toBe('incidents/db.md');
    expect(sync.snapshot!.byId.get('incidents/web.md')!.sections['resolution']).toContain('512 MiB');
    expect(top(sync, 'connection pool exhaustion latency')).not.toBe('incidents/api.md');

    // A broken entry in a new HEAD is skipped with a precise reason; a fixed one comes back.
    const h3 = remote.push({ 'incidents/db.md': '---\ntype: Incident\ntitle: [unclosed\n---\nbody\n' });
    const broken = await sync.syncNow();
    expect(broken).toMatchObject({ head: h3, mode: 'incremental' });
    expect(broken.skipped.map((p) => p.file)).toEqual(['incidents/db.md']);
    expect(ids(sync)).toEqual(['incidents/web.md']);
    expect(sync.status().skippedFiles).toBe(1);
    remote.push({ 'incidents/db.md': DB });
    await sync.syncNow();
    expect(ids(sync)).toEqual(['incidents/db.md', 'incidents/web.md']);
    expect(sync.status().skippedFiles).toBe(0);
    expect(sync.status().rebuilds).toEqual({ full: 1, incremental: 3 });
  });

  it('an in-place update equals a full reload of the same tree', async () => {
    const { remote, sync, mirror } = setup();
    await sync.syncNow();
    remote.push({
      'incidents/db.md': DB,
      'runbooks/KubeNodeNotReady.md': '# KubeNodeNotReady\n\nCheck the kubelet.\n',
      'incidents/api.md': null,
      'index.md': '# index\n',
    });
    remote.push({ 'incidents/web.md': WEB.replace('crash', 'crash loop'), '.hidden/x.md': DB });
    expect((await sync.syncNow()).mode).toBe('incremental');
    const full = await loadCatalog(mirror.dir);
    expect(ids(sync)).toEqual(full.entries.map((e) => e.id));
    expect(sync.snapshot!.entries.map((e) => e.title)).toEqual(full.entries.map((e) => e.title));
    expect([...sync.snapshot!.knownAlerts].sort()).toEqual(['diskfilling', 'kubenodenotready', 'kubepodcrashlooping']);
  });

  it('rebuilds the whole index when more files changed than the in-place limit', async () => {
    const { remote, sync } = setup(undefined, { limit: 1 });
    await sync.syncNow();
    remote.push({ 'incidents/db.md': DB, 'incidents/api.md': null });
    expect((await sync.syncNow()).mode).toBe('full');
    expect(ids(sync)).toEqual(['incidents/db.md', 'incidents/web.md']);
  });

  it('follows a force-push and discards local edits in the clone (reset, never merge)', async () => {
    const { remote, sync, mirror } = setup();
    await sync.syncNow();
    remote.push({ 'incidents/db.md': DB });
    await sync.syncNow();
    // Rewrite history on the remote: drop the last commit.
    git(remote.work, 'reset', '--hard', '--quiet', 'HEAD~1');
    git(remote.work, 'push', '--quiet', '--force', 'origin', 'HEAD:main');
    writeFileSync(join(mirror.dir, 'incidents', 'local-edit.md'), DB.replace('orders', 'local'));
    writeFileSync(join(mirror.dir, 'incidents', 'web.md'), 'tampered');
    const r = await sync.syncNow();
    expect(r.head).toBe(remote.head());
    expect(ids(sync)).toEqual(['incidents/api.md', 'incidents/web.md']);
    expect(existsSync(join(mirror.dir, 'incidents', 'local-edit.md'))).toBe(false);
    expect(sync.snapshot!.byId.get('incidents/web.md')!.title).toContain('web pods crash');
  });

  it('a symlink out of the catalog in a pushed commit stays refused', async () => {
    const { remote, sync } = setup();
    await sync.syncNow();
    const outside = join(remote.root, 'secret.md');
    writeFileSync(outside, DB);
    remote.push({}, 'links', { 'incidents/leak.md': outside, 'incidents/passwd.md': '/etc/passwd' });
    await sync.syncNow();
    expect(ids(sync)).not.toContain('incidents/leak.md');
    expect(ids(sync)).not.toContain('incidents/passwd.md');
    expect(
      sync
        .problems()
        .filter((p) => p.rule === 'file-outside-catalog')
        .map((p) => p.file)
        .sort(),
    ).toEqual(['incidents/leak.md', 'incidents/passwd.md']);
    // The same holds for a full rebuild of that tree.
    const sync2 = new CatalogSync({
      mirror: new GitMirror({ url: remote.bare, branch: 'main', dir: join(remote.root, 'clone2') }),
      clock: systemClock,
      logger: silentLogger,
    });
    expect((await sync2.syncNow()).mode).toBe('full');
    expect(ids(sync2)).toEqual(['incidents/api.md', 'incidents/web.md']);
  });

  it('a catalog folder that links out of the repository is refused', async () => {
    const remote = makeGitRemote({ 'docs/incidents/web.md': WEB });
    remotes.push(remote);
    const elsewhere = join(remote.root, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'db.md'), DB);
    remote.push({}, 'link the catalog folder out', { kb: elsewhere });
    const inside = new CatalogSync({
      mirror: new GitMirror({ url: remote.bare, branch: 'main', dir: join(remote.root, 'c1') }),
      path: 'docs',
      clock: systemClock,
      logger: silentLogger,
    });
    expect(ids((await inside.syncNow(), inside))).toEqual(['incidents/web.md']);
    const out = new CatalogSync({
      mirror: new GitMirror({ url: remote.bare, branch: 'main', dir: join(remote.root, 'c2') }),
      path: 'kb',
      clock: systemClock,
      logger: silentLogger,
    });
    await expect(out.syncNow()).rejects.toThrow(/links outside/);
    expect(out.snapshot).toBeUndefined();
    expect(() => new CatalogSync({ mirror: inside as unknown as CatalogMirror, path: '../x', clock: systemClock, logger: silentLogger })).toThrow(
      /inside the repository/,
    );
  });

  it('a removed or corrupted remote keeps the last good index and says so; it recovers', async () => {
    const { remote, sync } = setup();
    const good = (await sync.syncNow()).head;
    const moved = `${remote.bare}.gone`;
    renameSync(remote.bare, moved);
    await expect(sync.syncNow()).rejects.toThrow(/fetching .* still serving/);
    let st = sync.status();
    expect(st).toMatchObject({ head: good, indexed: true, failures: 1, consecutiveFailures: 1, entries: 2 });
    expect(st.lastError!.message).toMatch(/fetch/);
    expect(ids(sync)).toEqual(['incidents/api.md', 'incidents/web.md']);

    renameSync(moved, remote.bare);
    // Corrupt: the remote's branch moved, but its objects are gone.
    const h2 = remote.push({ 'incidents/db.md': DB });
    const objects = join(remote.bare, 'objects');
    renameSync(objects, `${objects}.bak`);
    mkdirSync(objects);
    await expect(sync.syncNow()).rejects.toThrow(/still serving/);
    expect(sync.status()).toMatchObject({ head: good, failures: 2, consecutiveFailures: 2 });
    expect(top(sync, 'connection pool exhaustion latency')).toBe('incidents/api.md');

    rmSync(objects, { recursive: true });
    renameSync(`${objects}.bak`, objects);
    const r = await sync.syncNow();
    expect(r).toMatchObject({ oldHead: good, head: h2 });
    st = sync.status();
    expect(st.consecutiveFailures).toBe(0);
    expect(st.lastError).toBeUndefined();
    expect(st.failures).toBe(2);
  });

  it('no clone and no remote: not indexed, the reason recorded; a restart serves the clone an earlier run left', async () => {
    const { remote, sync } = setup();
    const head = (await sync.syncNow()).head;
    const dir = join(remote.root, 'data', 'catalog-clone');
    rmSync(remote.bare, { recursive: true });
    const restarted = new CatalogSync({ mirror: new GitMirror({ url: remote.bare, branch: 'main', dir }), clock: systemClock, logger: silentLogger });
    const local = await restarted.indexLocal();
    expect(local).toMatchObject({ head, mode: 'full', entries: 2 });
    await expect(restarted.syncNow()).rejects.toThrow(/still serving/);
    expect(restarted.status()).toMatchObject({ indexed: true, head, failures: 1 });

    const never = new CatalogSync({
      mirror: new GitMirror({ url: remote.bare, branch: 'main', dir: join(remote.root, 'never') }),
      clock: systemClock,
      logger: silentLogger,
    });
    expect(await never.indexLocal()).toBeUndefined();
    await expect(never.syncNow()).rejects.toThrow(/no index yet/);
    expect(never.status()).toMatchObject({ indexed: false, failures: 1 });
    expect(never.snapshot).toBeUndefined();
    // A failed clone leaves no half-made folder behind.
    expect(readdirSync(remote.root).filter((n) => n.includes('never'))).toEqual([]);
  });

  it('concurrent requests coalesce into one fetch', async () => {
    const { remote, sync } = setup();
    await sync.syncNow();
    remote.push({ 'incidents/db.md': DB });
    const before = sync.status().fetches;
    const results = await Promise.all([sync.syncNow(), sync.syncNow(), sync.syncNow(), sync.syncNow()]);
    expect(sync.status().fetches).toBe(before + 1);
    expect(new Set(results)).toHaveProperty('size', 1);
    // Requests made while a fetch runs share one more (it sees what they asked for).
    const running = sync.syncNow();
    await Promise.resolve();
    await Promise.resolve();
    const later = [sync.syncNow(), sync.syncNow(), sync.syncNow()];
    await Promise.all([running, ...later]);
    expect(sync.status().fetches).toBe(before + 3);
    expect(new Set(await Promise.all(later)).size).toBe(1);
  });

  it('polls: a push is picked up without being asked', async () => {
    const clock = new ManualClock();
    const { remote, sync } = setup(undefined, { clock });
    sync.start(50);
    try {
      await waitFor(() => sync.status().indexed && clock.pending === 1, 'the first poll to run and set the next'); // real git I/O
      const h2 = remote.push({ 'incidents/db.md': DB });
      clock.advance(50);
      await waitFor(() => sync.status().head === h2, 'the second head indexed');
      expect(ids(sync)).toContain('incidents/db.md');
      await waitFor(() => clock.pending === 1, 'the next poll set');
    } finally {
      await sync.stop();
    }
    const fetches = sync.status().fetches;
    expect(clock.pending).toBe(0);
    clock.advance(10_000);
    expect(sync.status().fetches).toBe(fetches);
  });

  it('refuses a clone folder that is not a clone, bad branches and option-like URLs; masks credentials', async () => {
    const remote = makeGitRemote({ 'incidents/web.md': WEB });
    remotes.push(remote);
    const dir = join(remote.root, 'occupied');
    mkdirSync(dir);
    writeFileSync(join(dir, 'keep.txt'), 'mine');
    const sync = new CatalogSync({ mirror: new GitMirror({ url: remote.bare, branch: 'main', dir }), clock: systemClock, logger: silentLogger });
    await expect(sync.syncNow()).rejects.toThrow(/not empty and is not a git clone/);
    expect(readdirSync(dir)).toEqual(['keep.txt']);

    expect(() => new GitMirror({ url: '--upload-pack=touch /tmp/x', branch: 'main', dir })).toThrow(GitMirrorError);
    expect(() => new GitMirror({ url: 'ext::sh -c touch% /tmp/x', branch: 'main', dir })).toThrow(/ext::/);
    for (const b of ['-f', 'a..b', 'x y', 'main.lock', '']) expect(() => new GitMirror({ url: remote.bare, branch: b, dir }), b).toThrow(/branch/);

    const secret = 'ghp_S3cretTokenValue';
    const url = `http://x-access-token:${secret}@127.0.0.1:9/acme/catalog.git`;
    expect(maskUrl(url)).not.toContain(secret);
    const withCreds = new CatalogSync({
      mirror: new GitMirror({ url, branch: 'main', dir: join(remote.root, 'creds'), timeoutMs: 20_000 }),
      clock: systemClock,
      logger: silentLogger,
    });
    const err = await withCreds.syncNow().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err!.message).not.toContain(secret);
    expect(JSON.stringify(withCreds.status())).not.toContain(secret);
    expect(withCreds.status().remote).toContain('***@127.0.0.1');
  });

  it('a branch the remote does not have is a failure, not a crash', async () => {
    const remote = makeGitRemote({ 'incidents/web.md': WEB });
    remotes.push(remote);
    const sync = new CatalogSync({
      mirror: new GitMirror({ url: remote.bare, branch: 'no-such-branch', dir: join(remote.root, 'c') }),
      clock: systemClock,
      logger: silentLogger,
    });
    await expect(sync.syncNow()).rejects.toThrow(/no-such-branch/);
    expect(sync.status().indexed).toBe(false);
  });
});

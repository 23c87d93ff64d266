/**
 * The scheduled sweeps in serve: they run on the leader only, in the configured mode (dry run
 * by default: the fake sees no write), and each run lands in the audit log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { serveCuration } from '../../../src/runtime/serve-curation.js';
import { staticCatalog } from '../../../src/runtime/served-catalog.js';
import { configSchema } from '../../../src/config/schema.js';
import { CurateAudit } from '../../../src/core/curate/curate-audit.js';
import { marker } from '../../../src/core/curate/sweep-markers.js';
import { Ledger } from '../../../src/core/ledger/ledger.js';
import { ManualClock } from '../../../src/ports/clock.js';
import { silentLogger } from '../../../src/ports/logger.js';
import { startGitHubFake, type GitHubFake } from '../../fakes/github-fake.js';
import { REPO_ROOT } from '../../integration/helpers/spawn-bot.js';
import { waitFor } from '../../helpers/wait-for.js';

let fake: GitHubFake | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function setup(mode: 'dry-run' | 'apply', leader: boolean) {
  const clock = new ManualClock(new Date());
  let asked = 0;
  fake = await startGitHubFake();
  fake.addPull({ title: 'KB: a', body: marker('dup', 'fp1'), head: 'reprise/kb/a' });
  const dup = fake.addPull({ title: 'KB: b', body: marker('dup', 'fp1'), head: 'reprise/kb/b' });
  const config = configSchema.parse({
    curate: { interval: '50ms', mode },
    forge: { repo: fake.repo, token: 'test-token', api_url: fake.url },
    catalog: { git: { url: '/nonexistent/catalog.git' } },
  });
  const store = createStore('memory://', '');
  const ledger = await Ledger.open(store);
  const served = await staticCatalog(`${REPO_ROOT}catalog`, true, silentLogger);
  const curation = serveCuration({ config, logger: silentLogger, served, ledger, store, clock, isLeader: () => (asked++, leader) });
  return { f: fake, dup, store, curation, clock, asked: () => asked };
}

describe('grooming in serve', () => {
  it('runs on schedule in dry run: planned and audited, no forge write', { timeout: 30_000 }, async () => {
    const { f, store, curation, clock, asked } = await setup('dry-run', true);
    curation.start();
    const audit = new CurateAudit(store);
    const runs = async (): Promise<number> => (await audit.read()).filter((r) => 'kind' in r && r.kind === 'run').length;
    clock.advance(49);
    expect(asked()).toBe(0); // not due yet
    clock.advance(1);
    expect(asked()).toBe(1);
    await waitFor(async () => (await runs()) >= 1, 'the first scheduled run');
    clock.advance(50);
    await waitFor(async () => (await runs()) >= 2, 'the second scheduled run');
    await curation.stop();
    expect(f.writes()).toEqual([]);
    const records = await audit.read();
    expect(records.some((r) => 'outcome' in r && r.kind === 'dedup' && r.outcome === 'planned' && r.mode === 'dry-run')).toBe(true);
  });

  it('acts in apply mode; a follower never runs', { timeout: 30_000 }, async () => {
    const leader = await setup('apply', true);
    leader.curation.start();
    leader.clock.advance(50);
    await waitFor(async () => leader.f.items.get(leader.dup.number)!.state === 'closed', 'the duplicate closed');
    await leader.curation.stop();
    await leader.f.close();

    const follower = await setup('apply', false);
    follower.curation.start();
    follower.clock.advance(500);
    await follower.curation.stop();
    expect(follower.asked()).toBe(10); // the schedule ran ten times and declined each time
    expect(follower.f.requests).toEqual([]);
    expect(await new CurateAudit(follower.store).read()).toEqual([]);
  });
});

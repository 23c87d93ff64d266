/**
 * A catalog with broken entries serves the others (issue 2 "Done when"): the server starts,
 * names each skipped file in a warn log line, and still recalls the good entries.
 */
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CHECKOUT_ENTRY, crashLoopPayload, postAlert, type WebhookAccepted } from './helpers/alerts.js';
import { cleanup, makeTmpDir, REPO_ROOT, runCli, spawnBot } from './helpers/spawn-bot.js';

afterEach(cleanup);

const BROKEN_YAML = `---
type: Incident
title: checkout-api: a colon in an unquoted title makes this invalid YAML
resource: payments/checkout-api
alerts: [KubePodCrashLooping
---
# broken

## Symptom
x
## Cause
y
## Resolution
z
`;

const NO_CAUSE = `---
type: Incident
title: checkout-api crashlooping after a bad config map
resource: payments/checkout-api
alerts: [KubePodCrashLooping]
timestamp: 2025-04-01
status: active
---
# checkout-api and the bad config map

## Symptom

KubePodCrashLooping fired for checkout-api right after a config map change.

## Resolution

Rolled the config map back.
`;

/** Entries the bundled catalog loads, as `catalog lint --json` counts them. */
async function bundledEntries(): Promise<number> {
  const r = await runCli(['catalog', 'lint', 'catalog', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { entries: number }).entries;
}

describe('a catalog with broken entries', () => {
  it('starts, warns about each broken file by name, and still recalls the good incident', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    const catalog = join(dir, 'catalog');
    cpSync(join(REPO_ROOT, 'catalog'), catalog, { recursive: true });
    const good = await bundledEntries();
    writeFileSync(join(catalog, 'incidents', 'broken-frontmatter.md'), BROKEN_YAML);
    writeFileSync(join(catalog, 'incidents', 'missing-cause.md'), NO_CAUSE);
    const config = join(dir, 'reprise.yaml');
    writeFileSync(config, `catalog:\n  dir: ${JSON.stringify(catalog)}\n`);

    const bot = await spawnBot({ dataDir: join(dir, 'data'), args: ['--config', config] });

    const warns = bot.logs().filter((l) => l.level === 40);
    const named = (file: string) => warns.find((l) => l.file === file && typeof l.msg === 'string' && /skipped/.test(l.msg));
    expect(named('incidents/broken-frontmatter.md'), JSON.stringify(warns)).toBeDefined();
    expect(named('incidents/broken-frontmatter.md')!.rule).toMatch(/frontmatter/);
    expect(named('incidents/missing-cause.md'), JSON.stringify(warns)).toBeDefined();
    expect(String(named('incidents/missing-cause.md')!.msg)).toMatch(/cause/i);

    // Exactly the two broken files were skipped, and the summary counts files, not problems.
    const skippedFiles = new Set(warns.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('catalog entry skipped')).map((l) => l.file));
    expect([...skippedFiles].sort()).toEqual(['incidents/broken-frontmatter.md', 'incidents/missing-cause.md']);
    const indexed = bot.logs().find((l) => l.msg === 'catalog indexed');
    expect(indexed).toMatchObject({ catalog, entries: good, skippedFiles: 2 });

    const res = await postAlert(bot.url, crashLoopPayload({ status: 'firing' }));
    expect(res.status, res.text).toBe(202);
    expect((res.json as WebhookAccepted).results[0]?.answer).toMatchObject({ kind: 'incident', entry: CHECKOUT_ENTRY });
    const line = (await bot.waitForTranscript((ls) => ls.some((l) => l.kind === 'rca'))).find((l) => l.kind === 'rca');
    expect(line?.answer).toMatchObject({ kind: 'incident', entry: CHECKOUT_ENTRY });
    expect(line!.text).not.toContain('missing-cause');
    expect(line!.text).not.toContain('broken-frontmatter');
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
  });
});

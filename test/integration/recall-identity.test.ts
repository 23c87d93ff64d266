/**
 * `reprise recall --json` says which labels made each alert's identity (issue 19 item 1), with
 * the config's `identity.labels` taken into account as the webhook takes them.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { recallJson } from './helpers/recall-cli.js';
import { cleanup, makeTmpDir, runCli } from './helpers/spawn-bot.js';

afterEach(cleanup);

const nodeAlert = (instance: string, env: string) => ({
  status: 'firing',
  labels: { alertname: 'NodeFilesystemSpaceFillingUp', instance, job: 'node', mountpoint: '/', env, severity: 'warning' },
  annotations: { summary: 'Filesystem is predicted to run out of space within the next 24 hours.' },
  startsAt: '2026-11-30T12:00:00Z',
});
const payload = {
  version: '4',
  status: 'firing',
  receiver: 'reprise',
  groupKey: '{}:{alertname="NodeFilesystemSpaceFillingUp"}',
  alerts: [nodeAlert('node1:9100', 'prod'), nodeAlert('node2:9100', 'prod'), nodeAlert('node1:9100', 'staging')],
};

describe('reprise recall shows the identity', () => {
  it('per alert: the basis, the labels it was read from and the workload; identity.labels from the config', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    const plain = await recallJson(payload, { catalog: 'catalog', dir, name: 'plain' });
    expect(plain.map((i) => i.triggerKey)).toEqual([
      'nodefilesystemspacefillingup||host|node1|',
      'nodefilesystemspacefillingup||host|node2|',
      'nodefilesystemspacefillingup||host|node1|',
    ]);
    expect(plain[0]!.identity).toEqual({ basis: 'host', labels: ['instance'], workload: { namespace: '', name: 'node1', kind: 'host' } });

    const config = join(dir, 'reprise.yaml');
    writeFileSync(config, 'identity:\n  labels: [env]\n');
    const withEnv = await recallJson(payload, { catalog: 'catalog', dir, name: 'env', config });
    expect(withEnv.map((i) => i.triggerKey)).toEqual([
      'nodefilesystemspacefillingup||host|node1|||env=prod',
      'nodefilesystemspacefillingup||host|node2|||env=prod',
      'nodefilesystemspacefillingup||host|node1|||env=staging',
    ]);
    expect(withEnv[2]!.identity.labels).toEqual(['instance', 'env']);

    const text = await runCli(['recall', '--catalog', 'catalog', '--config', config, '--alert', join(dir, 'env.json')]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('nodefilesystemspacefillingup||host|node2|||env=prod\n  identity: host (from instance, env)\n');
  });
});

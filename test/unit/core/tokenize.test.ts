import { describe, expect, it } from 'vitest';
import { stem, tokenize } from '../../../src/core/tokenize.js';

describe('tokenize', () => {
  it.each([
    ['KubePodCrashLooping', ['kube', 'pod', 'crash', 'loop', 'kubepodcrashloop']],
    ['CPUThrottlingHigh', ['cpu', 'throttl', 'high', 'cputhrottlinghigh']],
    ['KubeAPIDown', ['kube', 'api', 'down', 'kubeapidown']],
    ['etcdNoLeader', ['etcd', 'no', 'leader', 'etcdnoleader']],
    ['EC2Instance', ['ec2', 'instance', 'ec2instance']],
    ['The pods are NOT ready in prod-eu/web_api', ['pod', 'not', 'ready', 'prod', 'eu', 'web', 'api']],
    ['k8s node: 95% disk, 3 volumes', ['k8s', 'node', '95', 'disk', 'volume']],
    ['a I x', []],
    ['', []],
  ])('%j', (text, expected) => {
    expect(tokenize(text)).toEqual(expected);
  });

  it('maps an alert name written in any case to the same whole-name term', () => {
    expect(tokenize('kubepodcrashlooping')).toEqual(['kubepodcrashloop']);
    expect(tokenize('KubePodCrashLooping')).toContain('kubepodcrashloop');
  });

  it('keeps non-ASCII words whole and lower-cased', () => {
    expect(tokenize('Überlast im Cluster')).toEqual(['überlast', 'im', 'cluster']);
  });

  it('is deterministic and keeps term frequency (no dedupe)', () => {
    expect(tokenize('disk disk Disk')).toEqual(['disk', 'disk', 'disk']);
  });
});

describe('stem', () => {
  it.each([
    ['pods', 'pod'],
    ['queries', 'query'],
    ['failed', 'fail'],
    ['exceeded', 'exceed'],
    ['looping', 'loop'],
    ['strings', 'str'],
    ['string', 'str'],
    ['status', 'status'],
    ['process', 'process'],
    ['analysis', 'analysis'],
    ['speed', 'speed'],
    ['bus', 'bus'],
    ['k8s', 'k8s'],
    ['2024', '2024'],
  ])('%s → %s', (word, expected) => {
    expect(stem(word)).toBe(expected);
  });
});

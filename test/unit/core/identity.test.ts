import { describe, expect, it } from 'vitest';
import { deriveWorkload, incidentFingerprint, parseArn, reduceJobName, reducePodName, reduceReplicaSetName, triggerKey } from '../../../src/core/identity.js';

describe('reducePodName', () => {
  it.each([
    ['web-7d9f8c6b5-x2k4q', 'web', 'deployment'],
    ['checkout-api-7d9f8c6b5-3d31c', 'checkout-api', 'deployment'],
    ['orders-db-7d9f8c6b5-4ea0c', 'orders-db', 'deployment'],
    ['db-0', 'db', 'statefulset'],
    ['prometheus-k8s-12', 'prometheus-k8s', 'statefulset'],
    ['fluent-bit-x2k4q', 'fluent-bit', 'daemonset'],
    ['backup-28312345-x2k4q', 'backup', 'cronjob'],
    // Words are not generated suffixes: a hand-named pod stays itself.
    ['web-proxy', 'web-proxy', 'pod'],
    ['nginx', 'nginx', 'pod'],
    ['web-backend-x2k4q', 'web-backend', 'daemonset'],
  ])('%s → %s (%s)', (pod, name, kind) => {
    expect(reducePodName(pod)).toEqual({ name, kind });
  });
});

describe('reduceReplicaSetName / reduceJobName', () => {
  it('strips the pod-template hash', () => {
    expect(reduceReplicaSetName('web-7d9f8c6b5')).toBe('web');
    expect(reduceReplicaSetName('web-frontend')).toBe('web-frontend');
  });
  it('reduces a CronJob-spawned job to its CronJob', () => {
    expect(reduceJobName('backup-28312345')).toEqual({ name: 'backup', kind: 'cronjob' });
    expect(reduceJobName('search-indexer-migrate-29145')).toEqual({ name: 'search-indexer-migrate-29145', kind: 'job' });
  });
});

describe('parseArn', () => {
  it.each([
    ['arn:aws:rds:eu-west-1:123456789012:db:orders', 'orders', 'db', 'eu-west-1', '123456789012'],
    ['arn:aws:sqs:us-east-1:123456789012:queue-name', 'queue-name', undefined, 'us-east-1', '123456789012'],
    ['arn:aws:ec2:eu-west-1:123456789012:instance/i-0abc', 'i-0abc', 'instance', 'eu-west-1', '123456789012'],
    ['arn:aws:s3:::my-bucket', 'my-bucket', undefined, '', ''],
  ])('%s', (arn, id, type, region, account) => {
    const p = parseArn(arn);
    expect(p?.id).toBe(id);
    expect(p?.resourceType).toBe(type);
    expect(p?.region).toBe(region);
    expect(p?.account).toBe(account);
  });
  it('rejects non-ARNs', () => {
    expect(parseArn('cpu')).toBeUndefined();
    expect(parseArn('arn:aws:rds')).toBeUndefined();
  });
});

describe('deriveWorkload', () => {
  const base = { alertname: 'X', namespace: 'shop', cluster: 'prod-eu-1' };

  it('prefers the controller label over the pod', () => {
    expect(deriveWorkload({ ...base, deployment: 'web', pod: 'other-7d9f8c6b5-x2k4q' })).toEqual({
      namespace: 'shop',
      name: 'web',
      kind: 'deployment',
      cluster: 'prod-eu-1',
    });
    expect(deriveWorkload({ ...base, statefulset: 'db' })?.kind).toBe('statefulset');
    expect(deriveWorkload({ ...base, daemonset: 'fluent-bit' })?.kind).toBe('daemonset');
    expect(deriveWorkload({ ...base, cronjob: 'backup' })).toMatchObject({ name: 'backup', kind: 'cronjob' });
  });

  it('reduces pods, replicasets and jobs', () => {
    expect(deriveWorkload({ ...base, pod: 'web-7d9f8c6b5-x2k4q' })).toMatchObject({ name: 'web', kind: 'deployment' });
    expect(deriveWorkload({ ...base, pod: 'db-0' })).toMatchObject({ name: 'db', kind: 'statefulset' });
    expect(deriveWorkload({ ...base, replicaset: 'web-7d9f8c6b5' })).toMatchObject({ name: 'web', kind: 'deployment' });
    expect(deriveWorkload({ ...base, job_name: 'backup-28312345' })).toMatchObject({ name: 'backup', kind: 'cronjob' });
  });

  it('never reads the Prometheus scrape `job` label as a Kubernetes Job', () => {
    expect(deriveWorkload({ ...base, job: 'kube-state-metrics' })).toEqual({
      namespace: 'shop',
      name: '',
      cluster: 'prod-eu-1',
    });
  });

  it('uses exported_namespace when namespace is absent', () => {
    expect(deriveWorkload({ alertname: 'X', exported_namespace: 'team-a', deployment: 'api' })?.namespace).toBe('team-a');
  });

  it('keeps PVC names and makes nodes cluster-scoped', () => {
    expect(deriveWorkload({ ...base, persistentvolumeclaim: 'data-db-0' })).toMatchObject({
      namespace: 'shop',
      name: 'data-db-0',
      kind: 'persistentvolumeclaim',
    });
    expect(deriveWorkload({ ...base, node: 'ip-10-0-1-93.eu-west-1.compute.internal' })).toMatchObject({
      namespace: '',
      name: 'ip-10-0-1-93.eu-west-1.compute.internal',
      kind: 'node',
    });
  });

  it('falls back to service only when nothing more specific exists', () => {
    expect(deriveWorkload({ ...base, service: 'orders-db' })).toMatchObject({ name: 'orders-db', kind: 'service' });
    expect(deriveWorkload({ ...base, service: 'kubelet', persistentvolumeclaim: 'data' })?.kind).toBe('persistentvolumeclaim');
  });

  it('reduces an ARN to its id, keeping account and region', () => {
    expect(deriveWorkload({ alertname: 'RdsDown', arn: 'arn:aws:rds:eu-west-1:123456789012:db:orders' })).toEqual({
      namespace: '',
      name: 'orders',
      kind: 'rds:db',
      account: '123456789012',
      region: 'eu-west-1',
    });
    // An explicit ARN outranks the exporter's own pod label.
    const w = deriveWorkload({
      alertname: 'X',
      namespace: 'monitoring',
      pod: 'yace-7d9f8c6b5-x2k4q',
      resource_arn: 'arn:aws:sqs:us-east-1:111122223333:jobs',
    });
    expect(w).toMatchObject({ name: 'jobs', kind: 'sqs', account: '111122223333', region: 'us-east-1' });
    // `resource=cpu` (quota) is not an ARN.
    expect(deriveWorkload({ ...base, resource: 'cpu' })?.name).toBe('');
  });

  it('reads account, region and cluster aliases', () => {
    const w = deriveWorkload({ alertname: 'X', k8s_cluster: 'c1', aws_account_id: '999', aws_region: 'us-west-2', deployment: 'a' });
    expect(w).toMatchObject({ cluster: 'c1', account: '999', region: 'us-west-2' });
  });

  it('returns undefined without namespace or name', () => {
    expect(deriveWorkload({ alertname: 'Watchdog', severity: 'none', cluster: 'prod' })).toBeUndefined();
    expect(deriveWorkload({ alertname: 'X', namespace: '  ' })).toBeUndefined();
  });
});

describe('triggerKey', () => {
  it('is lower-case alertname|namespace|kind|name|cluster', () => {
    const w = deriveWorkload({ alertname: 'KubePodCrashLooping', namespace: 'Shop', pod: 'Web-7d9f8c6b5-x2k4q', cluster: 'Prod' });
    expect(triggerKey('KubePodCrashLooping', w)).toBe('kubepodcrashlooping|shop|deployment|web|prod');
    expect(triggerKey('KubePodCrashLooping', { namespace: 'shop', name: 'web', kind: 'deployment', cluster: 'prod-eu-1' })).toBe(
      'kubepodcrashlooping|shop|deployment|web|prod-eu-1',
    );
  });
  it('appends the account only when known, and keeps empty parts', () => {
    expect(triggerKey('RdsDown', { namespace: '', name: 'orders', kind: 'rds:db', account: '123456789012' })).toBe('rdsdown||rds:db|orders||123456789012');
    expect(triggerKey('Watchdog')).toBe('watchdog||||');
  });
  it('is the same for every pod of one deployment', () => {
    const a = deriveWorkload({ alertname: 'A', namespace: 'n', pod: 'web-7d9f8c6b5-x2k4q' });
    const b = deriveWorkload({ alertname: 'A', namespace: 'n', pod: 'web-5b8c9d7f6-zz9vt' });
    expect(triggerKey('A', a)).toBe(triggerKey('A', b));
  });
  it('escapes the separator inside a part', () => {
    expect(triggerKey('A|B', { namespace: 'n', name: 'x' })).toBe('a%7cb|n||x|');
  });
});

describe('incidentFingerprint', () => {
  it('is 16 hex chars, stable under label order, and label-sensitive', () => {
    const a = incidentFingerprint('X', { alertname: 'X', a: '1', b: '2' });
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(incidentFingerprint('X', { b: '2', alertname: 'X', a: '1' })).toBe(a);
    expect(incidentFingerprint('X', { alertname: 'X', a: '1', b: '3' })).not.toBe(a);
  });
});

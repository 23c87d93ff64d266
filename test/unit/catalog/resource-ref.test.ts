import { describe, expect, it } from 'vitest';
import { parseResourceRef } from '../../../src/core/catalog/resource-ref.js';

describe('parseResourceRef', () => {
  it.each([
    ['prod/web', { raw: 'prod/web', namespace: 'prod', name: 'web' }],
    ['prod', { raw: 'prod', namespace: 'prod' }],
    ['prod/deployment/web', { raw: 'prod/deployment/web', namespace: 'prod', name: 'web' }],
    ['  prod/web  ', { raw: 'prod/web', namespace: 'prod', name: 'web' }],
    ['arn:aws:rds:eu-west-1:123456789012:db:orders', { name: 'orders', account: '123456789012', region: 'eu-west-1' }],
    ['arn:aws:lambda:us-east-1:123456789012:function/checkout', { name: 'checkout', account: '123456789012', region: 'us-east-1' }],
    ['arn:aws:s3:::my-bucket', { name: 'my-bucket' }],
    ['projects/p1/zones/europe-west1-b/instances/vm-1', { name: 'vm-1' }],
  ])('%s', (raw, expected) => {
    const r = parseResourceRef(raw);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.ref).toMatchObject(expected);
    if (r.ok && !('namespace' in expected)) expect(r.ref.namespace).toBeUndefined();
  });

  it.each(['', '   ', 'prod web', 'prod//web', 'prod/', 'arn:aws:rds', 'prod/we$b'])('rejects %j with a reason', (raw) => {
    const r = parseResourceRef(raw);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason.length).toBeGreaterThan(5);
  });
});

import { describe, expect, it } from 'vitest';
import { deriveIdentity } from '../../../src/core/identity.js';
import { resolveTriggerName, triggerNameProblem } from '../../../src/core/trigger-name.js';

// Keys as the identity rules make them, not typed by hand.
const key = (alertname: string, labels: Record<string, string>): string => deriveIdentity(alertname, { alertname, ...labels }).triggerKey;
const CRASH = key('KubePodCrashLooping', { namespace: 'shop', pod: 'checkout-api-7d9f8c6b5-x2k4q' });
const CRASH_CANARY = key('KubePodCrashLooping', { namespace: 'shop', pod: 'checkout-api-canary-7d9f8c6b5-x2k4q' });
const OOM = key('KubeContainerOOMKilled', { namespace: 'shop', pod: 'checkout-api-7d9f8c6b5-x2k4q' });
const DISK_02 = key('NodeFilesystemSpaceFillingUp', { instance: 'logs-02:9100' });
const DISK_021 = key('NodeFilesystemSpaceFillingUp', { instance: 'logs-021:9100' });
const DISK_03 = key('NodeFilesystemSpaceFillingUp', { instance: 'logs-03:9100' });
// A PagerDuty incident's title is its alertname: the key has spaces in it.
const PAGER = key('Disk full on db-3 (primary)', { pagerduty_service: 'PABC123' });
const KNOWN = [CRASH, CRASH_CANARY, OOM, DISK_02, DISK_021, DISK_03, PAGER];

const named = (name: string): string | undefined => {
  const r = resolveTriggerName(name, KNOWN);
  return r.ok ? r.triggerKey : undefined;
};

describe('resolveTriggerName', () => {
  it('takes the whole key as it is, whatever its case or quotes', () => {
    expect(CRASH).toBe('kubepodcrashlooping|shop|deployment|checkout-api|');
    expect(resolveTriggerName(CRASH, KNOWN)).toEqual({ ok: true, triggerKey: CRASH, how: 'exact' });
    expect(named(CRASH.toUpperCase())).toBe(CRASH);
    expect(named(`"${CRASH}"`)).toBe(CRASH);
  });

  it('names a host by its part, preferring the whole part to a longer one it starts', () => {
    expect(named('logs-02')).toBe(DISK_02);
    expect(named('logs-021')).toBe(DISK_021);
    // `logs` starts all three equally: no guess.
    const r = resolveTriggerName('logs', KNOWN);
    expect(r).toMatchObject({ ok: false, reason: 'ambiguous' });
    expect(!r.ok && [...r.matches].sort()).toEqual([DISK_02, DISK_021, DISK_03].sort());
  });

  it('names a trigger by a few of its words', () => {
    expect(named('checkout-api crashloop')).toBe(CRASH);
    expect(named('crashloop canary')).toBe(CRASH_CANARY);
    expect(named('checkout-api oom')).toBe(OOM);
    expect(named('  Checkout-API    CrashLoop ')).toBe(CRASH);
    // Both checkout-api pods: the alert alone does not say which.
    expect(resolveTriggerName('checkout-api', KNOWN)).toMatchObject({ ok: false, reason: 'ambiguous', matches: [OOM, CRASH] });
  });

  it('names a trigger by a unique prefix of its key', () => {
    expect(named('kubecontainer')).toBe(OOM);
    expect(named('kubepodcrashlooping|shop|deployment|checkout-api-')).toBe(CRASH_CANARY);
  });

  it('names a trigger whose key has spaces (a PagerDuty title)', () => {
    expect(PAGER).toContain('disk full on db-3 (primary)');
    expect(named('Disk full on db-3 (primary)')).toBe(PAGER);
    expect(named('disk full db-3')).toBe(PAGER);
    expect(named(PAGER)).toBe(PAGER);
  });

  it('answers a name that fits nothing with the closest triggers', () => {
    const r = resolveTriggerName('chekout-api crashlop', KNOWN);
    expect(r).toMatchObject({ ok: false, reason: 'unknown' });
    expect(!r.ok && r.matches.slice(0, 2)).toEqual([CRASH, CRASH_CANARY]);
    expect(resolveTriggerName('zzz', KNOWN)).toEqual({ ok: false, reason: 'unknown', name: 'zzz', matches: [] });
    expect(resolveTriggerName('   ', KNOWN)).toMatchObject({ ok: false, reason: 'empty' });
    expect(resolveTriggerName('logs-02', [])).toMatchObject({ ok: false, reason: 'unknown', matches: [] });
  });

  it('says why in words, quoting keys the way it is told', () => {
    const q = (k: string): string => `\`${k}\``;
    const ambiguous = resolveTriggerName('logs', KNOWN);
    const unknown = resolveTriggerName('chekout-api', KNOWN);
    if (ambiguous.ok || unknown.ok) throw new Error('expected refusals');
    expect(triggerNameProblem(ambiguous, q, '`status` lists them')).toBe(
      `“logs” fits 3 triggers equally: \`${DISK_021}\`, \`${DISK_02}\`, \`${DISK_03}\`. Say more of the one you mean.`,
    );
    expect(triggerNameProblem(unknown, q, '`status` lists them')).toMatch(/^No trigger is named “chekout-api”\. The closest: `/);
    expect(triggerNameProblem(resolveTriggerName('zzz', KNOWN) as typeof unknown, q, '`status` lists them')).toBe(
      'No trigger is named “zzz” (`status` lists them).',
    );
  });
});

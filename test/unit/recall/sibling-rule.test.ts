import { describe, expect, it } from 'vitest';
import { DEFAULT_SIBLING_OVERLAP, rerankMessages, siblingLines } from '../../../src/core/investigate/prompts.js';
import { recall } from '../../../src/core/recall/recall.js';
import { judgeSibling, nameDiff, nameWordLists } from '../../../src/core/recall/siblings.js';
import { defaultConfig } from '../../../src/config/load-config.js';
import type { Entry } from '../../../src/core/types.js';
import { NOW, alert, fixedSnapshot, servedSnapshot, noHistory, playbook, recallOpts, stepsOf } from './recall-fixtures.js';

/**
 * The sibling rule of the margin gate (issue 22): near-sibling runbooks are judged on the
 * words their names do not share, and those must be said by the alert. Foreign runbooks as
 * the prometheus-operator repository writes them: the file name is the alert they cover.
 */
const runbook = (name: string, body: string): Entry =>
  playbook(`runbooks/${name}.md`, { title: name.replace(/([a-z])([A-Z])/g, '$1 $2'), alerts: [name], body });

const listErrors = runbook('KubeStateMetricsListErrors', 'kube-state-metrics is experiencing errors in list operations against the API server.');
const watchErrors = runbook('KubeStateMetricsWatchErrors', 'kube-state-metrics is experiencing errors in watch operations against the API server.');
const cpu = runbook('KubeCPUOvercommit', 'The cluster has overcommitted CPU resource requests and cannot tolerate node failure.');
const cpuQuota = runbook('KubeCPUQuotaOvercommit', 'The cluster has overcommitted CPU resource requests for namespaces: quotas exceed what nodes offer.');

/** An alert with an opaque name (nothing covers it by name), so runbooks agree by content only. */
const hidden = (summary: string, extra: { generatorURL?: string; labels?: Record<string, string> } = {}) =>
  alert({
    alertname: 'Alertfc7494',
    labels: { severity: 'warning', ...extra.labels },
    annotations: { summary },
    ...(extra.generatorURL ? { generatorURL: extra.generatorURL } : {}),
  });

/** Scores fixed by the test: the top leads its sibling far beyond any margin gap. */
const scores = (top: Entry, sibling: Entry) => ({ [top.id]: 100, [sibling.id]: 40 });
const opts = recallOpts({ marginGap: 0.05 });

describe('sibling rule (margin gate)', () => {
  it('answers as one of 2 related runbooks when the alert describes both and says neither difference', () => {
    const i = hidden('kube-state-metrics is experiencing errors in operations.');
    const r = recall(i, fixedSnapshot([listErrors, watchErrors], scores(listErrors, watchErrors)), noHistory, opts, NOW);
    expect(r.answer).toMatchObject({ kind: 'runbook', entry: listErrors.id, related: [watchErrors.id] });
    expect(r.runbook?.related?.map((e) => e.id)).toEqual([watchErrors.id]);
    const [s, family] = stepsOf(r.trace, 'sibling', listErrors.id);
    expect(s).toMatchObject({ passed: false, value: 0.8, threshold: 0.5, rival: watchErrors.id });
    expect(s?.reason).toContain('the alert says neither "list" nor "watch"');
    expect(family).toMatchObject({ passed: true, value: 2, threshold: 3 });
    expect(family?.reason).toContain(`one of 2 related runbooks (${listErrors.id}, ${watchErrors.id})`);
    // The family stands alone for the margin: its members are not each other's rivals.
    expect(stepsOf(r.trace, 'margin', listErrors.id)[0]?.reason).toMatch(/alone/);
    // At most 1 in 2 that the leading page is the one.
    const exact = recall(
      hidden('kube-state-metrics is experiencing errors in list operations.'),
      fixedSnapshot([listErrors, watchErrors], scores(listErrors, watchErrors)),
      noHistory,
      opts,
      NOW,
    );
    expect(r.answer!.confidence).toBeLessThanOrEqual(exact.answer!.confidence / 2 + 0.01);
  });

  it('refuses siblings the alert does not describe: it says neither difference nor what their names share', () => {
    const scheduler = runbook('KubeSchedulerDown', 'KubeScheduler has disappeared from Prometheus target discovery.');
    const controller = runbook('KubeControllerManagerDown', 'KubeControllerManager has disappeared from Prometheus target discovery.');
    // Other Kube… runbooks make "kube" a common name word, as in any Kubernetes catalog.
    const more = ['KubePodCrashLooping', 'KubeNodeNotReady', 'KubeletTooManyPods'].map((n) => runbook(n, 'Something else.'));
    const snap = fixedSnapshot([scheduler, controller, ...more], { ...scores(scheduler, controller), ...Object.fromEntries(more.map((e) => [e.id, 1])) });
    // "kube" alone (the common word) of "kube", "down": not the Kube…Down family.
    const i = hidden('KubeProxy has disappeared from Prometheus target discovery.');
    const r = recall(i, snap, noHistory, opts, NOW);
    expect(r.answer).toBeNull();
    expect(r.nearMiss).toMatchObject({ entry: scheduler.id, gate: 'sibling' });
    expect(r.nearMiss?.reason).toMatch(/nor does it say enough of what their names share \(\d+% of it, weighted, against 50%\)/);
    // Said plainly, the same pair answers together.
    const down = recall(hidden('A Kubernetes component is down.'), snap, noHistory, opts, NOW);
    expect(down.answer?.related).toEqual([controller.id]);
  });

  it('refuses when more siblings than a card may offer cannot be told apart', () => {
    const names = ['KubeJobAFailed', 'KubeJobBFailed', 'KubeJobCFailed', 'KubeJobDFailed'];
    const books = names.map((n) => runbook(n, 'A job failed.'));
    const snap = fixedSnapshot(books, Object.fromEntries(books.map((b, i) => [b.id, 100 - i])));
    const r = recall(hidden('A kube job failed.'), snap, noHistory, opts, NOW);
    expect(r.answer).toBeNull();
    expect(r.nearMiss?.reason).toContain('4 runbooks cannot be told apart, more than the 3 a card may offer');
    const first3 = books.slice(0, 3);
    const three = recall(hidden('A kube job failed.'), fixedSnapshot(first3, Object.fromEntries(first3.map((b, i) => [b.id, 100 - i]))), noHistory, opts, NOW);
    expect(three.answer?.related).toHaveLength(2);
  });

  it('fires when the alert says one difference and not the other', () => {
    const i = hidden('kube-state-metrics is experiencing errors in list operations.');
    const r = recall(i, fixedSnapshot([listErrors, watchErrors], scores(listErrors, watchErrors)), noHistory, opts, NOW);
    expect(r.answer).toMatchObject({ kind: 'runbook', entry: listErrors.id });
    const [s] = stepsOf(r.trace, 'sibling', listErrors.id);
    expect(s?.passed).toBe(true);
    expect(s?.reason).toContain('the alert says "list", not "watch"');
    // Told apart, the sibling is no rival for the margin: the top stands alone.
    expect(stepsOf(r.trace, 'margin', listErrors.id)[0]?.reason).toMatch(/alone/);
  });

  it('answers with the sibling when the alert says all of its own words and none of the leader’s, whatever the scores', () => {
    const i = hidden('kube-state-metrics is experiencing errors in watch operations.');
    const r = recall(i, fixedSnapshot([listErrors, watchErrors], scores(listErrors, watchErrors)), noHistory, opts, NOW);
    expect(r.answer?.entry).toBe(watchErrors.id);
    expect(stepsOf(r.trace, 'sibling', listErrors.id)[0]).toMatchObject({ passed: false });
    expect(stepsOf(r.trace, 'sibling', listErrors.id)[0]?.reason).toContain(
      'the alert says "watch", which only runbooks/KubeStateMetricsWatchErrors.md is named by',
    );
    expect(stepsOf(r.trace, 'sibling', watchErrors.id)[0]?.reason).toContain('the alert says "watch", not "list"');
  });

  it('does not hand over to a sibling whose own words the alert says only in part', () => {
    const tsdb = runbook('PrometheusTSDBReloadsFailing', 'Prometheus has issues reloading blocks from disk.');
    const am = runbook('AlertmanagerFailedReload', 'Reloading the Alertmanager configuration has failed.');
    const i = hidden('Prometheus has failed to reload its configuration.');
    const r = recall(i, fixedSnapshot([am, tsdb], scores(am, tsdb)), noHistory, opts, NOW);
    // "prometheus" is said, "tsdb" is not: the alert does not describe TSDB reloads either.
    expect(r.answer).toBeNull();
    expect(r.nearMiss).toMatchObject({ entry: am.id, gate: 'sibling' });
    expect(stepsOf(r.trace, 'sibling', tsdb.id)).toHaveLength(0);
  });

  it('gives the generic check beside its quota variant only to an alert that carries its expression without the variant', () => {
    const snap = fixedSnapshot([cpu, cpuQuota], scores(cpu, cpuQuota));
    const text = 'Cluster has overcommitted CPU resource requests.';
    // Without the expression the alert cannot say which: one of the two.
    const bare = recall(hidden(text), snap, noHistory, opts, NOW);
    expect(bare.answer).toMatchObject({ entry: cpu.id, related: [cpuQuota.id] });
    expect(stepsOf(bare.trace, 'sibling', cpu.id)[0]?.reason).toContain('"quota"');

    const expr = (promql: string) => `http://prometheus:9090/graph?g0.expr=${encodeURIComponent(promql)}&g0.tab=1`;
    const generic = recall(
      hidden(text, { generatorURL: expr('sum(kube_pod_container_resource_requests{resource="cpu"}) > sum(kube_node_status_allocatable{resource="cpu"})') }),
      snap,
      noHistory,
      opts,
      NOW,
    );
    expect(generic.answer).toMatchObject({ entry: cpu.id });
    expect(generic.answer?.related).toBeUndefined();

    // The variant's own metric says "quota" (a compound: resourcequota): the variant it is.
    const quota = recall(hidden(text, { generatorURL: expr('sum(kube_resourcequota{type="hard", resource="cpu"}) > 1.5') }), snap, noHistory, opts, NOW);
    expect(stepsOf(quota.trace, 'sibling', cpu.id)[0]?.reason).toContain('the alert says "quota"');
    expect(quota.answer?.entry).toBe(cpuQuota.id);
  });

  it('is deterministic and off above sibling_overlap 1', () => {
    const i = hidden('kube-state-metrics is experiencing errors in operations.');
    const snap = fixedSnapshot([listErrors, watchErrors], scores(listErrors, watchErrors));
    expect(JSON.stringify(recall(i, snap, noHistory, opts, NOW).trace)).toBe(JSON.stringify(recall(i, snap, noHistory, opts, NOW).trace));
    const off = recall(i, snap, noHistory, recallOpts({ marginGap: 0.05, siblingOverlap: 2 }), NOW);
    expect(off.answer?.entry).toBe(listErrors.id);
    expect(stepsOf(off.trace, 'sibling')).toHaveLength(0);
  });

  it('judges only near-siblings within the window, and leaves names that share less than the overlap alone', () => {
    const other = runbook('PrometheusTargetLimitHit', 'Prometheus has dropped targets because some scrape configs exceeded the targets limit.');
    const i = hidden('kube-state-metrics is experiencing errors in operations.');
    const r = recall(i, fixedSnapshot([listErrors, other], scores(listErrors, other)), noHistory, opts, NOW);
    expect(stepsOf(r.trace, 'sibling')).toHaveLength(0);
    expect(r.answer?.entry).toBe(listErrors.id);
    // A sibling scoring below (1 − window) × top is not a leading one.
    const narrow = recall(
      i,
      fixedSnapshot([listErrors, watchErrors], scores(listErrors, watchErrors)),
      noHistory,
      recallOpts({ marginGap: 0.05, siblingWindow: 0.5 }),
      NOW,
    );
    expect(stepsOf(narrow.trace, 'sibling')).toHaveLength(0);
    expect(narrow.answer?.entry).toBe(listErrors.id);
  });

  it('works the same over the real recall index', () => {
    // Two entries make small BM25 scores: the floors are lowered so only the sibling rule decides.
    const low = recallOpts({ marginGap: 0.05, minScore: 1, soloFloor: 1 });
    const said = recall(
      hidden('kube-state-metrics is experiencing errors in list operations.'),
      servedSnapshot([listErrors, watchErrors]),
      noHistory,
      low,
      NOW,
    );
    expect(said.answer?.entry).toBe(listErrors.id);
    const unsaid = recall(hidden('kube-state-metrics is experiencing errors.'), servedSnapshot([listErrors, watchErrors]), noHistory, low, NOW);
    expect(unsaid.answer?.related).toHaveLength(1);
    expect([unsaid.answer?.entry, ...(unsaid.answer?.related ?? [])].sort()).toEqual([listErrors.id, watchErrors.id].sort());
    const elsewhere = recall(
      hidden('kube-state-metrics is experiencing errors in list operations.'),
      servedSnapshot([listErrors, watchErrors]),
      noHistory,
      low,
      NOW,
    );
    expect(elsewhere.answer?.related).toBeUndefined();
  });
});

describe('what an alert says', () => {
  const pair = (a: string, b: string) => {
    const x = runbook(a, 'x');
    const y = runbook(b, 'y');
    return { x, y, diff: nameDiff(x, y)! };
  };

  it('compares names word by word, keeping the small words that decide ("Some" against "Any")', () => {
    const { diff } = pair('PrometheusErrorSendingAlertsToAnyAlertmanager', 'PrometheusErrorSendingAlertsToSomeAlertmanagers');
    expect(diff.own).toEqual(['any']);
    expect(diff.rival).toEqual(['some']);
    expect(diff.overlap).toBeCloseTo(5 / 6);
    expect(nameWordLists(runbook('NodeFilesystemAlmostOutOfSpace', 'x'))[0]).toEqual(['node', 'filesystem', 'almost', 'out', 'space']);
  });

  it('hears a word in its compounds and other forms, but not in a word of either name', () => {
    const { x, y, diff } = pair('KubeletClientCertificateExpiration', 'KubeClientCertificateExpiration');
    // "kubelet" names the first; it does not also say the second's "kube".
    const j = judgeSibling(x, y, diff, hidden('Kubelet client certificate is about to expire.'));
    expect(j).toMatchObject({ ownSaid: ['kubelet'], rivalSaid: [], passed: true });
    const q = pair('KubeMemoryQuotaOvercommit', 'KubeMemoryOvercommit');
    const url = `http://p/graph?g0.expr=${encodeURIComponent('kube_resourcequota{resource="memory"} > 1')}`;
    expect(judgeSibling(q.x, q.y, q.diff, hidden('Cluster has overcommitted memory resource requests.', { generatorURL: url })).ownSaid).toEqual(['quota']);
    const r = pair('PrometheusOperatorReconcileErrors', 'PrometheusOperatorWatchErrors');
    expect(judgeSibling(r.x, r.y, r.diff, hidden('Errors while reconciling Prometheus in namespace monitoring.')).passed).toBe(true);
  });

  it('breaks an equal share on the phrase the name has ("labels limit", not "targets … limit")', () => {
    const { x, y, diff } = pair('PrometheusLabelLimitHit', 'PrometheusTargetLimitHit');
    const j = judgeSibling(x, y, diff, hidden('Prometheus has dropped targets because some scrape configs have exceeded the labels limit.'));
    expect(j).toMatchObject({ ownSaid: ['label'], rivalSaid: ['target'], passed: true });
    const back = judgeSibling(y, x, nameDiff(y, x)!, hidden('Prometheus has dropped targets because some scrape configs have exceeded the labels limit.'));
    expect(back.passed).toBe(false);
  });
});

describe('rerank prompt', () => {
  it('shows the model the words that tell near-sibling candidates apart and which the alert says', () => {
    const i = hidden('kube-state-metrics is experiencing errors in list operations.');
    const lines = siblingLines(i, [listErrors, watchErrors, cpu]);
    expect(lines).toEqual(['candidate 1 and candidate 2: only 1 has "list", only 2 has "watch"; the alert says "list"']);
    const user = rerankMessages(i, [listErrors, watchErrors, cpu])[1]?.content ?? '';
    expect(user).toContain('data near-siblings');
    expect(user).toContain(lines[0]);
    expect(rerankMessages(i, [listErrors, cpu])[1]?.content).not.toContain('near-siblings');
  });

  it('uses the config default of recall.sibling_overlap when none is passed', () => {
    expect(DEFAULT_SIBLING_OVERLAP).toBe(defaultConfig().recall.sibling_overlap);
    const half = runbook('KubePodCrashLooping', 'x');
    const other = runbook('KubePodNotReady', 'y'); // shares exactly half of its words
    const i = hidden('Pod is crash looping.');
    expect(siblingLines(i, [half, other])).toHaveLength(1);
    expect(siblingLines(i, [half, other], 0.51)).toHaveLength(0);
  });
});

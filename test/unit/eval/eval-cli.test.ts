import { describe, expect, it } from 'vitest';
import { evalCommand, parseCases, runEval, withLeaveOneOut, type EvalCase } from '../../../src/cli/eval.js';
import { createRng } from '../../../src/core/eval/prng.js';
import { CALIBRATION_START, SEARCH_SPACE, settingKey } from '../../../src/core/eval/calibrate.js';
import { crossValidate, SettingEvaluator } from '../../../src/core/eval/cross-validate.js';
import { cvMarkdown, cvText } from '../../../src/core/eval/cv-report.js';
import { ruleFolds, runbookFolds } from '../../../src/core/eval/folds.js';
import { createEvalRunner } from '../../../src/core/eval/run-cases.js';
import { renderEvalReport, sweepSvg } from '../../../src/core/eval/report.js';
import type { SweepPoint } from '../../../src/core/eval/metrics.js';
import { alertPayload, servedSnapshot, incidentEntry, playbook, recallOpts } from '../recall/recall-fixtures.js';

describe('parseCases', () => {
  it('reads one case per line, defaults the variant and reports bad lines by number', () => {
    const text = [
      '{"id":"c1","expect":{"runbook":"runbooks/a.md"},"payload":{"alerts":[]}}',
      '',
      'not json',
      '{"id":"c3","payload":{}}',
      '{"id":"c4","variant":"name-visible","expect":{"none":true},"payload":{}}',
      'null',
      '{"id":5,"expect":{},"payload":{}}',
      '   ',
    ].join('\n');
    const { cases, problems } = parseCases(text);
    expect(cases.map((c) => [c.id, c.variant])).toEqual([['c1', 'default'], ['c4', 'name-visible']]);
    expect(cases[0]?.expect).toEqual({ runbook: 'runbooks/a.md' });
    expect(problems).toHaveLength(4);
    expect(problems[0]).toMatch(/^line 3: /);
    expect(problems[1]).toBe('line 4: needs "id", "expect" and "payload"');
    expect(problems[2]).toMatch(/^line 6: /);
    expect(problems[3]).toBe('line 7: needs "id", "expect" and "payload"');
  });

  it('returns nothing for an empty file', () => {
    expect(parseCases('')).toEqual({ cases: [], problems: [] });
  });
});

describe('withLeaveOneOut', () => {
  const base: EvalCase[] = [
    { id: 'v1', variant: 'name-visible', expect: { runbook: 'runbooks/a.md' }, payload: {} },
    { id: 'v2', variant: 'name-visible', expect: { entry: 'incidents/b.md' }, payload: {} },
    { id: 'h1', variant: 'name-hidden', expect: { runbook: 'runbooks/a.md' }, payload: {} },
    { id: 'n1', variant: 'name-visible', expect: { none: true }, payload: {} },
    { id: 'r1', variant: 'name-visible', expect: { runbook: 'runbooks/c.md' }, payload: {}, remove: 'runbooks/x.md' },
  ];

  it('adds one leave-one-out twin per name-visible positive, with its expected entry removed', () => {
    const all = withLeaveOneOut(base);
    expect(all.slice(0, base.length)).toEqual(base);
    const twins = all.slice(base.length);
    expect(twins).toEqual([
      { id: 'v1:loo', variant: 'leave-one-out', expect: { none: true }, payload: {}, remove: 'runbooks/a.md' },
      { id: 'v2:loo', variant: 'leave-one-out', expect: { none: true }, payload: {}, remove: 'incidents/b.md' },
    ]);
    expect(base[0]).not.toHaveProperty('remove'); // the original is not mutated
  });
});

/** Minimal well-formedness: every tag closes in order and text holds no raw `<` or bare `&`. */
function assertWellFormed(svg: string): void {
  const stack: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"]*")*)\s*(\/?)>/g;
  let last = 0;
  for (let m = tag.exec(svg); m; m = tag.exec(svg)) {
    const text = svg.slice(last, m.index);
    expect(text, `text before ${m[0]}`).not.toMatch(/[<>]|&(?!(amp|lt|gt|quot|#\d+);)/);
    last = tag.lastIndex;
    const [, close, name, , selfClose] = m;
    if (close) expect(stack.pop(), `closing ${name}`).toBe(name);
    else if (!selfClose) stack.push(name!);
  }
  expect(svg.slice(last).trim()).toBe('');
  expect(stack).toEqual([]);
}

describe('sweepSvg', () => {
  const pts = (...xs: Array<[number, number]>): SweepPoint[] => xs.map(([precision, coverage], i) => ({ setting: i / 10, precision, coverage, falseFireRate: 0 }));

  it('draws a well-formed svg with one path per variant that has usable points', () => {
    const sweep = new Map<string, SweepPoint[]>([
      ['name-visible', pts([0.9, 0.5], [0.8, 0.7], [0.6, 0.9])],
      ['name-hidden & <renamed>', pts([1, 0.1], [0.7, 0.4])],
      ['leave-one-out', pts([Number.NaN, Number.NaN])],
    ]);
    const svg = sweepSvg(sweep);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    assertWellFormed(svg);
    expect(svg.match(/<path /g)).toHaveLength(2);
    expect(svg.match(/<circle /g)).toHaveLength(5);
    expect(svg).toContain('name-hidden &amp; &lt;renamed&gt;');
    expect(svg).not.toContain('NaN');
  });

  it('stays well-formed with no data at all', () => {
    const svg = sweepSvg(new Map());
    assertWellFormed(svg);
    expect(svg).not.toContain('<path');
  });
});

describe('runEval and the report', () => {
  const crash = playbook('runbooks/KubePodCrashLooping.md', {
    title: 'Pod crash looping (CrashLoopBackOff)',
    alerts: ['KubePodCrashLooping'],
    description: 'A container keeps restarting: CrashLoopBackOff.',
    body: '## Diagnosis\n\n- kubectl logs --previous on the crash looping pod\n- check restarts and events',
  });
  const disk = playbook('runbooks/NodeFilesystemSpaceFillingUp.md', { title: 'Node filesystem filling up', alerts: ['NodeFilesystemSpaceFillingUp'], body: 'Find large files with du.' });
  const oom = incidentEntry('incidents/checkout-oom.md', { resource: 'payments/checkout-api', title: 'checkout-api OOMKilled', cause: 'cache', resolution: 'rollback' });
  const snapshot = servedSnapshot([crash, disk, oom]);
  const crashPayload = alertPayload({
    alertname: 'KubePodCrashLooping',
    labels: { namespace: 'web', pod: 'front-7d9f8c6b5-x2k4q', reason: 'CrashLoopBackOff' },
    annotations: { summary: 'Pod is crash looping.', description: 'front container restarts: crash looping (CrashLoopBackOff)' },
  });
  const cases: EvalCase[] = withLeaveOneOut([
    { id: 'crash', variant: 'name-visible', expect: { runbook: crash.id }, payload: crashPayload },
    { id: 'none', variant: 'name-visible', expect: { none: true }, payload: alertPayload({ alertname: 'Watchdog', annotations: { summary: 'always firing' } }) },
    { id: 'broken', variant: 'name-visible', expect: { none: true }, payload: { alerts: 'nope' } },
  ]);
  const opts = recallOpts();
  const result = runEval(snapshot.entries, cases, opts);

  it('produces one line per case, expected vs fired, with the trace', () => {
    expect(result.lines.map((l) => l.id)).toEqual(['crash', 'none', 'broken', 'crash:loo']);
    const [crashLine, none, broken, loo] = result.lines;
    expect(crashLine).toMatchObject({ expected: crash.id, fired: crash.id });
    expect(crashLine?.ranked[0]).toBe(crash.id);
    expect(none).toMatchObject({ expected: null, fired: null });
    expect(broken).toMatchObject({ fired: null, ranked: [] });
    expect(JSON.stringify(broken?.trace)).toContain('payload did not parse');
    // The leave-one-out twin runs without its runbook: it must not fire it.
    expect(loo).toMatchObject({ variant: 'leave-one-out', expected: null });
    expect(loo?.ranked).not.toContain(crash.id);
    expect(loo?.fired).not.toBe(crash.id);
  });

  it('aggregates per variant and sweeps every variant over the same settings', () => {
    expect(result.metrics.map((m) => m.variant)).toEqual(['name-visible', 'leave-one-out']);
    expect(result.metrics[0]).toMatchObject({ positives: 1, negatives: 2, correct: 1, falseFires: 0, precision: 1, coverage: 1 });
    const series = [...result.sweep.values()];
    expect(series).toHaveLength(2);
    expect(series[0]!.length).toBeGreaterThan(1);
    expect(series[1]!.map((p) => p.setting)).toEqual(series[0]!.map((p) => p.setting));
  });

  it('renders a markdown report and its svg', () => {
    const { markdown, svg } = renderEvalReport({ metrics: result.metrics, sweep: result.sweep, options: opts, wrong: result.wrong, catalogDir: '/x/catalog', casesFile: '/x/cases.jsonl', date: new Date('2026-01-02T00:00:00Z') });
    expect(markdown).toMatch(/^# Recall evaluation — 2026-01-02\n/);
    expect(markdown).toContain('| name-visible | 3 | 1.000 | 1.000 | 1.000 |');
    expect(markdown).toContain('![sweep](recall-sweep.svg)');
    assertWellFormed(svg);
    expect(svg.match(/<path /g)).toHaveLength(1); // leave-one-out has no positives to plot
  });
});

describe('cross-validation', () => {
  const books = [
    playbook('runbooks/KubePodCrashLooping.md', { title: 'Pod crash looping', alerts: ['KubePodCrashLooping'], body: 'The container keeps restarting in CrashLoopBackOff; read kubectl logs --previous.' }),
    playbook('runbooks/NodeFilesystemSpaceFillingUp.md', { title: 'Node filesystem filling up', alerts: ['NodeFilesystemSpaceFillingUp'], body: 'The disk fills up; find large files with du and clean them.' }),
    playbook('runbooks/KubeJobFailed.md', { title: 'Job failed', alerts: ['KubeJobFailed'], body: 'A batch job failed to complete; inspect the job pods and their exit codes.' }),
    playbook('runbooks/CPUThrottlingHigh.md', { title: 'CPU throttling high', alerts: ['CPUThrottlingHigh'], body: 'Processes are throttled by their CPU limits; raise the limit.' }),
  ];
  const texts: Array<[string, string]> = [
    ['runbooks/KubePodCrashLooping.md', 'Pod is crash looping (CrashLoopBackOff), restarting.'],
    ['runbooks/NodeFilesystemSpaceFillingUp.md', 'Filesystem is filling up, disk almost full.'],
    ['runbooks/KubeJobFailed.md', 'Job failed to complete.'],
    ['runbooks/CPUThrottlingHigh.md', 'Processes experience elevated CPU throttling.'],
  ];
  const cases: EvalCase[] = withLeaveOneOut(texts.flatMap(([runbook, summary], i): EvalCase[] => {
    const name = runbook.replace(/^runbooks\/|\.md$/g, '');
    return [
      { id: `rule-${i}`, variant: 'name-visible', expect: { runbook }, payload: alertPayload({ alertname: name, annotations: { summary } }) },
      { id: `rule-${i}:hidden`, variant: 'name-hidden', expect: { runbook }, payload: alertPayload({ alertname: `Alert${i}f3a9`, annotations: { summary } }) },
    ];
  }).concat([0, 1, 2, 3].map((i) => ({ id: `neg-${i}`, variant: 'name-visible', expect: { none: true }, payload: alertPayload({ alertname: `ApacheDown${i}`, annotations: { summary: 'Apache is down' } }) }))));
  // A small space keeps the test fast; the search itself is the production one.
  const space = { ...SEARCH_SPACE, minScore: [6], soloFloor: [8], labelNames: [1], exprLabels: [0], exprMetrics: [0], description: [1], marginGap: [0.1, 0.3], nameBoost: [2, 3], summary: [1, 2] };
  const run = (split: 'runbook' | 'rule' = 'rule') => {
    const evaluator = new SettingEvaluator(createEvalRunner(books, { memo: true }), cases, recallOpts());
    const folds = split === 'rule' ? ruleFolds(cases, 2, createRng(1)) : runbookFolds(cases, 2, createRng(1));
    return crossValidate(evaluator, { folds, split, start: { ...CALIBRATION_START }, space, grid: {} });
  };
  const cv = run();
  const byRunbook = run('runbook');

  it('calibrates per fold, measures on the held-out fold and reports each variant', () => {
    expect(cv.k).toBe(2);
    expect(cv.folds.map((f) => f.trainCases + f.testCases)).toEqual([cases.length, cases.length]);
    expect(cv.byVariant.map((v) => v.variant).sort()).toEqual(['leave-one-out', 'name-hidden', 'name-visible']);
    const visible = cv.byVariant.find((v) => v.variant === 'name-visible')!;
    expect(visible.precision.n).toBe(2);
    expect(cv.folds.map((f) => settingKey(f.chosen))).toContain(settingKey(cv.consensus));
  });

  it('is deterministic', () => {
    expect(JSON.stringify(run())).toBe(JSON.stringify(cv));
  });

  it('says which split it used and lists every held-out wrong fire', () => {
    expect(byRunbook.split).toBe('runbook');
    expect(cvText(byRunbook, byRunbook.consensusInSample.metrics, 'test')).toContain('folds by expected runbook');
    expect(cvText(cv, cv.consensusInSample.metrics, 'test')).toContain('folds by alert rule');
    expect(cvText(cv, cv.consensusInSample.metrics, 'test')).toMatch(/held-out folds \(rule split\), each at its own fold's choice: \d+ wrong fire/);
    // Every wrong fire is one the held-out metrics counted.
    const wrong = cv.folds.reduce((n, f) => n + f.test.reduce((m, v) => m + v.wrong + v.falseFires, 0), 0);
    expect(cv.wrongFires).toHaveLength(wrong);
  });

  it('prints in-sample and cross-validated figures side by side', () => {
    const text = cvText(cv, cv.consensusInSample.metrics, 'test');
    expect(text).toContain('in-sample precision');
    expect(text).toMatch(/name-hidden\s+4\s+\S+\s+\S+\s+—\s+\d\.\d{3} ± \d\.\d{3}/);
    expect(text).toContain('fold 2');
  });

  it('renders a markdown report with the command that reproduces it', () => {
    const md = cvMarkdown({ byRunbook, byRule: cv }, cv.consensusInSample.metrics, { date: new Date('2026-11-30T00:00:00Z'), command: 'reprise eval recall --cv 2', seed: 1, inSampleWrong: [] });
    expect(md).toMatch(/^# Recall cross-validation — 2026-11-30\n/);
    expect(md.indexOf('## Folds by runbook')).toBeGreaterThan(0);
    expect(md.indexOf('## Folds by alert rule')).toBeGreaterThan(md.indexOf('## Folds by runbook'));
    expect(md).toContain('### The configured settings on every case: 0 wrong fires');
    expect(md).toContain('`reprise eval recall --cv 2`');
    expect(md).toMatch(/\| name-hidden \| 4 \| \d\.\d{3} \| \d\.\d{3} \| — \| \d\.\d{3} ± \d\.\d{3} \|/);
    expect(md).toContain('| leave-one-out | 4 | — | — | 0.000 | — | — | 0.000 ± 0.000 |');
  });
});

describe('reprise eval recall flags', () => {
  const io = () => {
    let err = '';
    return { io: { stdout: () => undefined, stderr: (t: string) => void (err += t), stdin: async () => '', env: {}, cwd: '/' }, err: () => err };
  };
  it.each([
    [['--cv', '1']],
    [['--cv', 'five']],
    [['--seed', '1.5']],
    [['--without', 'expression']],
    [['--cv', '5', '--without', 'telepathy']],
  ])('rejects %j with exit 2 and the usage', async (flags) => {
    const t = io();
    expect(await evalCommand(['recall', '--catalog', '/nope', '--cases', '/nope.jsonl', ...flags], t.io)).toBe(2);
    expect(t.err()).toContain('usage: reprise eval recall');
  });
});

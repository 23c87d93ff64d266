/**
 * templates/catalog-repo: the starting point of a team's own catalog repository. It must lint
 * clean with the built CLI in the GitHub format its workflow uses, a broken entry must turn
 * into `::error` annotations and a failing exit, and the workflow must run what this says.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runInProcess } from '../../helpers/cli-in-process.js';
import { root } from './k8s-objects.js';

const TEMPLATE = 'templates/catalog-repo';

/** `reprise catalog lint --format github DIR` from `cwd`: the CLI's own entry, in this process. */
async function lint(dir: string, cwd = root): Promise<{ status: number; stdout: string; stderr: string }> {
  const run = runInProcess(['catalog', 'lint', '--format', 'github', dir], { env: {}, cwd });
  const status = await run.status;
  return { status, stdout: run.stdout(), stderr: run.stderr() };
}

describe('templates/catalog-repo', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'reprise-catalog-template-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('lints clean: its example entries load, and README and .github/ are not entries', async () => {
    const out = await lint(TEMPLATE);
    expect(out.status, out.stdout + out.stderr).toBe(0);
    expect(out.stdout).not.toMatch(/^::(error|warning)/m);
    expect(out.stdout).toMatch(/^2 entries loaded, 0 errors, 0 warnings$/m);
  });

  it('a broken copy gives ::error annotations on the files at fault and a non-zero exit', async () => {
    const copy = join(tmp, 'broken');
    cpSync(resolve(root, TEMPLATE), copy, { recursive: true });
    const incident = join(copy, 'incidents/orders-api-oomkilled-after-heap-change.md');
    // An Incident without its required Cause, and a Playbook of an unknown type.
    writeFileSync(incident, readFileSync(incident, 'utf8').replace(/## Cause\n[\s\S]*?(?=## Resolution)/, ''));
    const playbook = join(copy, 'playbooks/KubeJobFailed.md');
    writeFileSync(playbook, readFileSync(playbook, 'utf8').replace('type: Playbook', 'type: Runbook'));
    // Linted from inside the repository, as the workflow does (`.`): paths relative to its root.
    const out = await lint('.', copy);
    expect(out.status).toBe(1);
    const errors = out.stdout.split('\n').filter((l) => l.startsWith('::error '));
    expect(errors.some((l) => l.startsWith('::error file=incidents/orders-api-oomkilled-after-heap-change.md,line='))).toBe(true);
    expect(errors.some((l) => l.startsWith('::error file=playbooks/KubeJobFailed.md,line='))).toBe(true);
  });

  it('the workflow lints the checkout with --format github, from the image release the bot runs', () => {
    type Workflow = { on: Record<string, unknown>; jobs: Record<string, { env?: Record<string, string>; steps: Array<{ uses?: string; run?: string }> }> };
    const wf = parse(readFileSync(resolve(root, TEMPLATE, '.github/workflows/lint.yml'), 'utf8')) as Workflow;
    expect(Object.keys(wf.on)).toEqual(expect.arrayContaining(['pull_request', 'push']));
    const job = Object.values(wf.jobs)[0];
    const run = job?.steps.map((s) => s.run ?? '').join('\n') ?? '';
    expect(job?.steps[0]?.uses).toMatch(/^actions\/checkout@/);
    expect(run).toMatch(/\/app\/dist\/main\.js catalog lint --format github \.$/m);
    expect(run).toContain('"$GITHUB_WORKSPACE:/catalog:ro" --workdir /catalog');
    expect(run).not.toMatch(/npx\s+(--yes\s+)?reprise/);
    // The same image the Kubernetes base deploys, so the catalog is checked by the bot's own rules.
    const images = (parse(readFileSync(resolve(root, 'manifests/kubernetes/base/kustomization.yaml'), 'utf8')) as { images: Array<{ name: string; newName: string; newTag: string }> }).images;
    const bot = images.find((i) => i.name === 'reprise');
    expect(job?.env?.['REPRISE_IMAGE']).toBe(`${bot?.newName}:${bot?.newTag}`);
    // The image's layout the command relies on.
    const dockerfile = readFileSync(resolve(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^WORKDIR \/app$/m);
    expect(dockerfile).toMatch(/^COPY --from=build \/app\/dist \.\/dist$/m);
  });
});

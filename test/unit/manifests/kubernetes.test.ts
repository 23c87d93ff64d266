/**
 * manifests/kubernetes: both overlays render with the real `kubectl kustomize`, every object
 * passes the Kubernetes schemas offline, and what the bot relies on holds: one writer on the
 * embedded store, a shared Redis for several replicas, secrets only by reference, read-only
 * RBAC, and a ConfigMap the real config loader accepts.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import type { IDeployment, IStatefulSet } from 'kubernetes-models/apps/v1';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1';
import type { IClusterRole, IClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import type { IConfigMap, IContainer, IEnvVar, IPodSpec, IService } from 'kubernetes-models/v1';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfigText } from '../../../src/config/load-config.js';
import type { Config } from '../../../src/config/schema.js';
import { configFields } from '../../../src/config/schema-fields.js';
import { kubectlAvailable, kustomize, one, parseYamlObjects, root, selects, validateObject, type K8sObject } from './k8s-objects.js';

const OVERLAYS = ['single', 'ha', 'single-ui-proxy'] as const;
type Overlay = (typeof OVERLAYS)[number];

const read = (path: string) => readFileSync(resolve(root, path), 'utf8');
const secretExample = parse(read('manifests/kubernetes/secret.example.yaml')) as { kind: string; metadata: { name: string }; stringData: Record<string, string> };

/** Env var names the config loader reads (declared on the schema), plus the config file's own. */
const CONFIG_ENV = new Set(['REPRISE_CONFIG', ...configFields().flatMap((f) => f.env ?? [])]);
/** Schema keys that are secrets and can be set from the environment: each must come from the Secret. */
const SECRET_FIELDS = configFields().filter((f) => f.secret === true && (f.env ?? []).length > 0);
const WRITE_VERBS = ['create', 'update', 'patch', 'delete', 'deletecollection', 'impersonate', 'bind', 'escalate', 'approve', 'sign', '*'];
const FORBIDDEN_RESOURCES = ['secrets', 'pods/exec', 'pods/attach', 'pods/portforward', 'nodes/proxy', 'services/proxy', 'pods/proxy', 'serviceaccounts/token', '*'];

const bot = (objs: K8sObject[]) => one<IDeployment>(objs, 'Deployment', 'reprise');
const podOf = (d: IDeployment | IStatefulSet): IPodSpec => d.spec?.template.spec as IPodSpec;
const botContainer = (objs: K8sObject[]): IContainer => {
  const c = podOf(bot(objs)).containers.find((x) => x.name === 'reprise');
  if (!c) throw new Error('no container "reprise" in Deployment reprise');
  return c;
};
const workloads = (objs: K8sObject[]) => objs.filter((o) => ['Deployment', 'StatefulSet', 'DaemonSet'].includes(o.kind)) as unknown as Array<IDeployment | IStatefulSet>;
const allContainers = (objs: K8sObject[]) => workloads(objs).flatMap((w) => [...podOf(w).containers, ...(podOf(w).initContainers ?? [])]);

/** The bot's env as the pod would see it with a minimal Secret (only the keys it cannot start without) and the image's ENV. */
function podEnv(objs: K8sObject[]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const image = read('Dockerfile').match(/^ENV (.+)$/m)?.[1] ?? '';
  for (const [, k, v] of image.matchAll(/(\w+)=(\S+)/g)) env[k as string] = v;
  for (const e of botContainer(objs).env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    const ref = e.valueFrom?.secretKeyRef;
    if (ref && ref.optional !== true) env[e.name] = ref.key === 'store-url' ? 'redis://:sample-password@reprise-redis:6379' : `sample-${ref.key}`;
  }
  return env;
}

/** The ConfigMap mounted where `--config` points, and the file in it. */
function configFile(objs: K8sObject[]): { text: string; path: string } {
  const c = botContainer(objs);
  const path = c.args?.[c.args.indexOf('--config') + 1];
  if (!path || !c.args?.includes('--config')) throw new Error('the bot is not started with --config');
  const mount = (c.volumeMounts ?? []).find((m) => path.startsWith(`${m.mountPath}/`));
  const volume = podOf(bot(objs)).volumes?.find((v) => v.name === mount?.name);
  const cmName = volume?.configMap?.name;
  if (!mount || !cmName) throw new Error(`--config ${path} is not inside a mounted ConfigMap`);
  const cm = one<IConfigMap>(objs, 'ConfigMap', cmName);
  const text = cm.data?.[path.slice(mount.mountPath.length + 1)];
  if (text === undefined) throw new Error(`ConfigMap ${cmName} has no key for ${path}`);
  return { text, path };
}

const loadConfig = (objs: K8sObject[]): Config => {
  const { text, path } = configFile(objs);
  return parseConfigText(text, { env: podEnv(objs), cwd: '/app', file: path });
};

describe.runIf(kubectlAvailable())('manifests/kubernetes (kubectl kustomize)', () => {
  const rendered = {} as Record<Overlay | 'default', K8sObject[]>;
  beforeAll(() => {
    for (const o of OVERLAYS) rendered[o] = kustomize(`manifests/kubernetes/overlays/${o}`);
    rendered.default = kustomize('manifests/kubernetes');
  });

  describe.each(OVERLAYS)('overlay %s', (overlay) => {
    const objs = () => rendered[overlay];

    it('every rendered object passes its Kubernetes schema', () => {
      expect(objs().length).toBeGreaterThan(10);
      for (const o of objs()) expect(() => validateObject(o)).not.toThrow();
    });

    it('the ConfigMap holds a config the real loader accepts, consistent with the pod around it', () => {
      const config = loadConfig(objs());
      const c = botContainer(objs());
      const port = c.ports?.find((p) => p.name === 'http')?.containerPort;
      expect(port).toBe(config.server.port);
      expect(config.server.bearer_token).toBe('sample-bearer-token');
      // The store's folder is a mounted volume (the root filesystem is read-only).
      expect((c.volumeMounts ?? []).map((m) => m.mountPath)).toContain(config.store.data_dir);
      // The tool server it names is the MCP Service rendered beside it.
      for (const s of config.tools.servers.filter((x) => x.transport === 'http')) {
        const u = new URL(s.url ?? '');
        const svc = one<IService>(objs(), 'Service', u.hostname);
        expect(svc.spec?.ports?.map((p) => p.port)).toContain(Number(u.port));
      }
    });

    it('runs as non-root on a read-only root filesystem, with resources and probes on the port it serves', () => {
      for (const w of workloads(objs())) {
        const pod = podOf(w);
        for (const c of pod.containers) {
          const where = `${w.metadata?.name}/${c.name}`;
          expect(pod.securityContext?.runAsNonRoot ?? c.securityContext?.runAsNonRoot, where).toBe(true);
          expect(c.securityContext?.readOnlyRootFilesystem, where).toBe(true);
          expect(c.securityContext?.allowPrivilegeEscalation, where).toBe(false);
          expect(c.securityContext?.capabilities?.drop, where).toEqual(['ALL']);
          expect(c.resources?.requests?.['memory'], where).toBeDefined();
          expect(c.resources?.limits?.['memory'], where).toBeDefined();
        }
      }
      const c = botContainer(objs());
      expect(c.readinessProbe?.httpGet).toMatchObject({ path: '/readyz', port: 'http' });
      expect(c.livenessProbe?.httpGet).toMatchObject({ path: '/healthz', port: 'http' });
      expect(c.ports?.map((p) => p.name)).toEqual(['http']);
      expect(podOf(bot(objs())).automountServiceAccountToken).toBe(false);
    });

    it('the Service and the ServiceMonitor reach /metrics on the bot pods', () => {
      const labels = bot(objs()).spec?.template.metadata?.labels;
      const svc = one<IService>(objs(), 'Service', 'reprise');
      expect(selects(svc.spec?.selector, labels)).toBe(true);
      expect(svc.spec?.ports?.find((p) => p.name === 'http')?.targetPort).toBe('http');
      const sm = one<IServiceMonitor>(objs(), 'ServiceMonitor', 'reprise');
      expect(selects(sm.spec.selector.matchLabels, svc.metadata?.labels)).toBe(true);
      expect(sm.spec.endpoints?.map((e) => [e.port, e.path])).toEqual([['http', '/metrics']]);
    });

    it('no Secret is rendered: secrets are referenced by key, and every key is one secret.example.yaml documents', () => {
      expect(objs().filter((o) => o.kind === 'Secret')).toEqual([]);
      const refs = allContainers(objs()).flatMap((c) => (c.env ?? []).filter((e) => e.valueFrom?.secretKeyRef));
      expect(refs.length).toBeGreaterThan(5);
      for (const e of refs) {
        const ref = e.valueFrom?.secretKeyRef;
        expect(ref?.name, e.name).toBe(secretExample.metadata.name);
        expect(ref?.key, e.name).toMatch(/^[a-z0-9-]+$/);
        expect(Object.keys(secretExample.stringData), `${e.name} → ${ref?.key}`).toContain(ref?.key);
      }
    });

    it('every secret the bot reads from env comes from the Secret, never as a plain value, under a name the loader reads', () => {
      const env = botContainer(objs()).env ?? [];
      for (const e of env) expect(CONFIG_ENV, `${e.name} is not an env var the config loader reads`).toContain(e.name);
      const fromSecret = new Set(env.filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.name));
      for (const f of SECRET_FIELDS) {
        if (f.path === 'store.url' && overlay.startsWith('single')) continue; // the embedded store has no URL
        expect((f.env ?? []).some((n) => fromSecret.has(n)), `${f.path} (${f.env?.join(' or ')}) has no secretKeyRef`).toBe(true);
        for (const n of f.env ?? []) expect(env.find((e: IEnvVar) => e.name === n)?.value, `${n} given as a plain value`).toBeUndefined();
      }
      const bearer = env.find((e) => e.name === 'REPRISE_BEARER_TOKEN')?.valueFrom?.secretKeyRef;
      expect(bearer?.optional ?? false).toBe(false); // the webhook port is never left unauthenticated
    });

    it('RBAC is read-only: get/list/watch only, no Secrets, no exec or proxy, bound to the MCP server alone', () => {
      const roles = objs().filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role') as unknown as IClusterRole[];
      expect(roles.length).toBeGreaterThan(0);
      for (const r of roles) {
        for (const rule of r.rules ?? []) {
          for (const v of rule.verbs) expect(WRITE_VERBS, `${r.metadata?.name}: verb ${v}`).not.toContain(v);
          for (const res of rule.resources ?? []) expect(FORBIDDEN_RESOURCES, `${r.metadata?.name}: resource ${res}`).not.toContain(res);
          expect(rule.apiGroups ?? []).not.toContain('*');
          expect(rule.nonResourceURLs ?? []).toEqual([]);
        }
      }
      const bindings = objs().filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding') as unknown as IClusterRoleBinding[];
      const mcp = one<IDeployment>(objs(), 'Deployment', 'reprise-mcp-k8s');
      for (const b of bindings) {
        expect(b.subjects?.map((s) => [s.kind, s.name, s.namespace])).toEqual([['ServiceAccount', podOf(mcp).serviceAccountName, bot(objs()).metadata?.namespace]]);
        expect(roles.map((r) => r.metadata?.name)).toContain(b.roleRef.name);
      }
      expect(bindings.length).toBeGreaterThan(0);
      expect(podOf(mcp).containers[0]?.args).toContain('--read-only');
    });

    it('NetworkPolicy: the bot pods take traffic only on their port, and reach DNS and HTTPS', () => {
      const labels = bot(objs()).spec?.template.metadata?.labels;
      const policies = (objs().filter((o) => o.kind === 'NetworkPolicy') as unknown as INetworkPolicy[]).filter((p) => selects(p.spec?.podSelector?.matchLabels, labels));
      expect(policies.length).toBeGreaterThan(0);
      const ingress = policies.flatMap((p) => p.spec?.ingress ?? []);
      expect(ingress.length).toBeGreaterThan(0);
      for (const rule of ingress) expect(rule.ports?.map((p) => p.port)).toEqual(['http']);
      expect(policies.some((p) => p.spec?.policyTypes?.includes('Ingress'))).toBe(true);
      const egressPorts = policies.flatMap((p) => p.spec?.egress ?? []).flatMap((r) => (r.ports ?? []).map((p) => `${p.protocol}/${p.port}`));
      expect(egressPorts).toEqual(expect.arrayContaining(['UDP/53', 'TCP/53', 'TCP/443', 'TCP/8080']));
    });
  });

  it('single-ui-proxy: only /ui goes out, through oauth2-proxy, and the bot believes its user header from the controller pods alone', async () => {
    const objs = rendered['single-ui-proxy'];
    const ingresses = objs.filter((o) => o.kind === 'Ingress') as Array<K8sObject & { metadata: { annotations?: Record<string, string> }; spec: { rules: Array<{ http: { paths: Array<{ path: string; backend: { service: { name: string; port: { name: string } } } }> } }> } }>;
    expect(ingresses).toHaveLength(1);
    const ing = ingresses[0]!;
    const paths = ing.spec.rules.flatMap((r) => r.http.paths);
    expect(paths.map((p) => p.path)).toEqual(['/ui']);
    expect(paths[0]!.backend.service).toEqual({ name: 'reprise', port: { name: 'http' } });
    expect(ing.metadata.annotations?.['nginx.ingress.kubernetes.io/auth-url']).toMatch(/^https:\/\//);
    const header = ing.metadata.annotations?.['nginx.ingress.kubernetes.io/auth-response-headers'];
    const env = bot(objs).spec?.template.spec?.containers.find((c) => c.name === 'reprise')?.env ?? [];
    const value = (n: string) => env.find((e) => e.name === n)?.value;
    expect(value('REPRISE_UI_TRUSTED_HEADER')).toBe(header);
    expect(value('REPRISE_UI_TRUSTED_PROXIES')).toMatch(/^\d+\.\d+\.\d+\.\d+\/\d+$/);
    // What the bot makes of it: the real loader, with the pod's env.
    const { loadConfig } = await import('../../../src/config/load-config.js');
    const cfg = loadConfig({ cwd: root, env: { REPRISE_UI_TRUSTED_HEADER: value('REPRISE_UI_TRUSTED_HEADER'), REPRISE_UI_TRUSTED_PROXIES: value('REPRISE_UI_TRUSTED_PROXIES') } });
    expect(cfg.ui.trusted_header).toBe(header);
    expect(cfg.ui.trusted_proxies).toEqual([value('REPRISE_UI_TRUSTED_PROXIES')]);
    // Only named peers may connect at all: no rule of a policy selecting the bot admits any pod
    // (which, inside the trusted CIDR, could send the user header itself), and one admits the
    // ingress controller's pods in their own namespace.
    const labels = bot(objs).spec?.template.metadata?.labels;
    const policies = (objs.filter((o) => o.kind === 'NetworkPolicy') as unknown as INetworkPolicy[]).filter((p) => selects(p.spec?.podSelector?.matchLabels, labels));
    const rules = policies.flatMap((p) => p.spec?.ingress ?? []);
    expect(rules.length).toBeGreaterThan(0);
    for (const r of rules) {
      expect(r.from?.length ?? 0, JSON.stringify(r)).toBeGreaterThan(0);
      for (const peer of r.from ?? []) {
        expect(peer.ipBlock, JSON.stringify(peer)).toBeUndefined();
        const pods = peer.podSelector;
        expect((pods?.matchLabels && Object.keys(pods.matchLabels).length > 0) || (pods?.matchExpressions?.length ?? 0) > 0, JSON.stringify(peer)).toBe(true);
        if (peer.namespaceSelector) expect(Object.keys(peer.namespaceSelector.matchLabels ?? {}).length, JSON.stringify(peer)).toBeGreaterThan(0);
      }
    }
    expect(
      rules.some((r) =>
        (r.from ?? []).some(
          (p) => p.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] === 'ingress-nginx' && p.podSelector?.matchLabels?.['app.kubernetes.io/name'] === 'ingress-nginx',
        ),
      ),
    ).toBe(true);
  });

  it('single: one replica, Recreate, the embedded store on a PersistentVolumeClaim', () => {
    const objs = rendered.single;
    const d = bot(objs);
    expect(d.spec?.replicas).toBe(1);
    expect(d.spec?.strategy?.type).toBe('Recreate');
    const config = loadConfig(objs);
    expect(config.store.url).toBeUndefined();
    const mount = botContainer(objs).volumeMounts?.find((m) => m.mountPath === config.store.data_dir);
    const claim = podOf(d).volumes?.find((v) => v.name === mount?.name)?.persistentVolumeClaim?.claimName;
    expect(claim).toBeDefined();
    one(objs, 'PersistentVolumeClaim', claim ?? '');
  });

  it('ha: two or more replicas on Redis from the Secret, a PodDisruptionBudget and anti-affinity, no PVC for the store', () => {
    const objs = rendered.ha;
    const d = bot(objs);
    const labels = d.spec?.template.metadata?.labels;
    expect(d.spec?.replicas).toBeGreaterThanOrEqual(2);
    expect(d.spec?.strategy?.type).toBe('RollingUpdate');
    const url = botContainer(objs).env?.find((e) => e.name === 'REPRISE_STORE_URL');
    expect(url?.value).toBeUndefined();
    expect(url?.valueFrom?.secretKeyRef).toMatchObject({ name: 'reprise-secrets', key: 'store-url' });
    expect(url?.valueFrom?.secretKeyRef?.optional ?? false).toBe(false);
    expect(loadConfig(objs).store.url).toMatch(/^redis:\/\//);

    expect(podOf(d).volumes?.filter((v) => v.persistentVolumeClaim)).toEqual([]);
    expect(objs.filter((o) => o.kind === 'PersistentVolumeClaim')).toEqual([]);

    const pdbs = (objs.filter((o) => o.kind === 'PodDisruptionBudget') as unknown as IPodDisruptionBudget[]).filter((p) => selects(p.spec?.selector?.matchLabels, labels));
    expect(pdbs).toHaveLength(1);
    expect(Number(pdbs[0]?.spec?.minAvailable ?? 0)).toBeGreaterThanOrEqual(1);
    expect(Number(pdbs[0]?.spec?.minAvailable)).toBeLessThan(d.spec?.replicas ?? 0); // a drain can still proceed

    const anti = podOf(d).affinity?.podAntiAffinity;
    const terms = [...(anti?.requiredDuringSchedulingIgnoredDuringExecution ?? []), ...(anti?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => t.podAffinityTerm)];
    expect(terms.some((t) => t.topologyKey === 'kubernetes.io/hostname' && selects(t.labelSelector?.matchLabels, labels))).toBe(true);
  });

  it('ha: the bundled Redis is durable (AOF fsync always, noeviction), password-protected, and reachable by the bot alone', () => {
    const objs = rendered.ha;
    const sts = one<IStatefulSet>(objs, 'StatefulSet', 'reprise-redis');
    const c = podOf(sts).containers[0];
    const args = (c?.args ?? []).join(' ');
    expect(args).toMatch(/--appendonly yes/);
    expect(args).toMatch(/--appendfsync always/);
    expect(args).toMatch(/--maxmemory-policy noeviction/);
    expect(args).toMatch(/--requirepass \$\(REDIS_PASSWORD\)/);
    expect(c?.env?.find((e) => e.name === 'REDIS_PASSWORD')?.valueFrom?.secretKeyRef?.key).toBe('redis-password');
    const svcName = new URL(podEnv(objs)['REPRISE_STORE_URL'] ?? '').hostname;
    expect(selects(one<IService>(objs, 'Service', svcName).spec?.selector, sts.spec?.template.metadata?.labels)).toBe(true);

    const botLabels = bot(objs).spec?.template.metadata?.labels;
    const policies = objs.filter((o) => o.kind === 'NetworkPolicy') as unknown as INetworkPolicy[];
    const toRedis = policies.filter((p) => selects(p.spec?.podSelector?.matchLabels, botLabels)).flatMap((p) => p.spec?.egress ?? []);
    expect(toRedis.some((r) => r.ports?.some((p) => p.port === 6379) && r.to?.some((t) => selects(t.podSelector?.matchLabels, sts.spec?.template.metadata?.labels)))).toBe(true);
    const redisPolicy = policies.find((p) => selects(p.spec?.podSelector?.matchLabels, sts.spec?.template.metadata?.labels));
    expect(redisPolicy?.spec?.ingress?.flatMap((r) => r.from ?? []).every((f) => selects(f.podSelector?.matchLabels, botLabels))).toBe(true);
    expect(redisPolicy?.spec?.policyTypes).toEqual(['Ingress', 'Egress']);
    // docs/kubernetes.md starts Redis alone with this selector before moving a ledger in.
    const storeOnly = objs.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'reprise-store').map((o) => `${o.kind}/${o.metadata.name}`);
    expect(storeOnly.sort()).toEqual(['NetworkPolicy/reprise-redis', 'NetworkPolicy/reprise-to-redis', 'Service/reprise-redis', 'StatefulSet/reprise-redis']);
  });

  it('`kubectl kustomize manifests/kubernetes` still renders the single overlay', () => {
    expect(rendered.default.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(rendered.single.map((o) => `${o.kind}/${o.metadata.name}`).sort());
  });
});

describe('manifests/kubernetes/secret.example.yaml', () => {
  it('is a valid Secret whose every value is a placeholder, and no kustomization renders it', () => {
    validateObject(secretExample as unknown as K8sObject);
    expect(Object.keys(secretExample.stringData).length).toBeGreaterThan(5);
    for (const [k, v] of Object.entries(secretExample.stringData)) expect(v, k).toMatch(/^<[^<>]+>$/);
    expect('data' in secretExample).toBe(false);
    for (const k of ['manifests/kubernetes/kustomization.yaml', 'manifests/kubernetes/base/kustomization.yaml', 'manifests/kubernetes/overlays/single/kustomization.yaml', 'manifests/kubernetes/overlays/ha/kustomization.yaml']) {
      expect(read(k)).not.toMatch(/secret\.example|secretGenerator/);
    }
  });
});

describe('the schema check itself', () => {
  const deployment = (): K8sObject => parseYamlObjects(read('manifests/kubernetes/base/deployment.yaml'), 'deployment.yaml')[0] as K8sObject;

  it('accepts the base Deployment as written', () => {
    expect(() => validateObject(deployment())).not.toThrow();
  });

  it('rejects a wrong type, a missing required field and an unknown kind', () => {
    const wrongType = deployment();
    (wrongType['spec'] as { replicas: unknown }).replicas = 'two';
    expect(() => validateObject(wrongType)).toThrow(/replicas must be integer/);
    const noSelector = deployment();
    delete (noSelector['spec'] as { selector?: unknown }).selector;
    expect(() => validateObject(noSelector)).toThrow(/selector/);
    expect(() => validateObject({ ...deployment(), kind: 'Deploymnet' })).toThrow(/no schema/);
    const badPort = deployment();
    const c = (badPort['spec'] as { template: { spec: { containers: Array<{ ports: Array<{ containerPort: unknown }> }> } } }).template.spec.containers[0];
    if (c?.ports[0]) c.ports[0].containerPort = '8080';
    expect(() => validateObject(badPort)).toThrow(/containerPort/);
  });
});

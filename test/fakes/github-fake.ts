/**
 * A GitHub REST fake on 127.0.0.1, port 0, speaking the endpoints Octokit calls for the forge
 * (SPEC §10): repos get (with permissions), pulls list/get/create/update/merge, issues
 * list/create/comments/labels, and the GitHub App installation-token exchange. Pages with a
 * real `Link` header; records every request (method, path, query, body) so a test can assert
 * "no write call"; scripted failures (a 500 once, a 403 rate limit with its reset, a 429 with
 * Retry-After) are consumed in order by the requests they match.
 *
 * Stable API (reused by the grooming sweeps' tests): `startGitHubFake`, `GitHubFake`,
 * `FakeFailure`, `RecordedGitHubRequest`, `FakePullSeed`, `FakeIssueSeed`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createVerify } from 'node:crypto';

export interface RecordedGitHubRequest {
  method: string;
  /** Path without the query (`/repos/o/r/pulls`). */
  path: string;
  query: Record<string, string>;
  /** Parsed JSON body (undefined for none). */
  body: unknown;
  /** The `authorization` header as sent. */
  authorization: string | undefined;
  /** The status the fake answered. */
  status: number;
}

export interface FakeFailure {
  status: number;
  /** Only requests with this method (default: any). */
  method?: string;
  /** Only requests whose path matches (default: any). */
  path?: string | RegExp;
  /** How many matching requests fail (default 1). */
  times?: number;
  /** Extra response headers (`retry-after`, `x-ratelimit-reset`, …). */
  headers?: Record<string, string>;
  message?: string;
}

export interface FakePullSeed {
  title: string;
  body?: string;
  head: string;
  base?: string;
  labels?: string[];
  state?: 'open' | 'closed';
  merged?: boolean;
  createdAt?: string;
  updatedAt?: string;
  closedAt?: string;
  user?: string;
}

export interface FakeIssueSeed {
  title: string;
  body?: string;
  labels?: string[];
  state?: 'open' | 'closed';
  createdAt?: string;
  user?: string;
}

export interface FakeComment {
  id: number;
  issue: number;
  body: string;
  user: string;
  createdAt: string;
}

/** One issue or pull request (they share a number space, as on GitHub). */
export interface FakeItem {
  number: number;
  kind: 'pull' | 'issue';
  title: string;
  body: string;
  state: 'open' | 'closed';
  merged: boolean;
  labels: string[];
  head: string;
  base: string;
  user: string;
  createdAt: string;
  updatedAt: string;
  closedAt?: string;
  mergedAt?: string;
}

export interface GitHubFakeOptions {
  /** `owner/name` served (default `acme/kb`). */
  repo?: string;
  /** Accepted personal token (default `test-token`). */
  token?: string;
  defaultBranch?: string;
  permissions?: { pull: boolean; push: boolean; admin?: boolean };
  /** GitHub App: the JWT must be RS256 signed by this key's pair, `iss` = appId. */
  app?: { appId: string; installationId: number; publicKeyPem: string };
  /** Page size when the client does not ask (GitHub: 30). */
  defaultPerPage?: number;
  /** When set, creating a PR whose head it denies is a 422 (as GitHub does for a missing branch). */
  branchExists?: (branch: string) => boolean | Promise<boolean>;
  /** Clock for timestamps (default: real time). */
  now?: () => Date;
  /** Serve under a path prefix as GitHub Enterprise does (`/api/v3`); recorded paths omit it. */
  apiPrefix?: string;
}

export interface GitHubFake {
  /** Base URL to give Octokit (`http://127.0.0.1:PORT`). */
  url: string;
  repo: string;
  /** Every request received, in order. */
  requests: RecordedGitHubRequest[];
  /** Requests that would change the forge (anything but GET/HEAD). */
  writes(): RecordedGitHubRequest[];
  /** All issues and pull requests, by number. */
  items: Map<number, FakeItem>;
  comments: FakeComment[];
  pulls(): FakeItem[];
  issues(): FakeItem[];
  commentsOn(number: number): FakeComment[];
  addPull(seed: FakePullSeed): FakeItem;
  addIssue(seed: FakeIssueSeed): FakeItem;
  addComment(number: number, body: string, user?: string): FakeComment;
  /** A human merges / closes a pull request (no git work: the test does that). */
  merge(number: number): void;
  closeItem(number: number): void;
  /** Scripts failures, consumed in order by matching requests. */
  fail(failure: FakeFailure): void;
  /** Changes what the token may do (e.g. `push: false`). */
  setPermissions(p: { pull: boolean; push: boolean; admin?: boolean }): void;
  close(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
};

function verifyJwt(token: string, app: NonNullable<GitHubFakeOptions['app']>, now: Date): boolean {
  const parts = token.split('.');
  if (parts.length !== 3) return false;
  const [h, p, s] = parts as [string, string, string];
  const v = createVerify('RSA-SHA256');
  v.update(`${h}.${p}`);
  if (!v.verify(app.publicKeyPem, Buffer.from(s, 'base64url'))) return false;
  try {
    const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as { alg?: string };
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as { iss?: string | number; exp?: number; iat?: number };
    const t = now.getTime() / 1000;
    return (
      header.alg === 'RS256' &&
      String(payload.iss) === app.appId &&
      typeof payload.exp === 'number' &&
      payload.exp > t &&
      payload.exp - (payload.iat ?? 0) <= 600
    );
  } catch {
    return false;
  }
}

export async function startGitHubFake(opts: GitHubFakeOptions = {}): Promise<GitHubFake> {
  const repo = opts.repo ?? 'acme/kb';
  const token = opts.token ?? 'test-token';
  const defaultBranch = opts.defaultBranch ?? 'main';
  let permissions = opts.permissions ?? { pull: true, push: true, admin: false };
  const now = opts.now ?? (() => new Date());
  const requests: RecordedGitHubRequest[] = [];
  const items = new Map<number, FakeItem>();
  const comments: FakeComment[] = [];
  const failures: FakeFailure[] = [];
  const installationTokens = new Set<string>();
  let nextNumber = 1;
  let nextCommentId = 1000;
  let url = '';

  const html = (n: number, kind: 'pull' | 'issue'): string => `https://github.example/${repo}/${kind === 'pull' ? 'pull' : 'issues'}/${n}`;
  const labelsOut = (l: string[]) => l.map((name, i) => ({ id: i + 1, name, color: 'ededed' }));
  const pullOut = (it: FakeItem) => ({
    id: it.number * 10,
    number: it.number,
    html_url: html(it.number, 'pull'),
    url: `${url}/repos/${repo}/pulls/${it.number}`,
    title: it.title,
    body: it.body,
    state: it.state,
    merged: it.merged,
    merged_at: it.mergedAt ?? null,
    labels: labelsOut(it.labels),
    head: { ref: it.head, label: `${repo.split('/')[0]}:${it.head}` },
    base: { ref: it.base },
    user: { login: it.user },
    created_at: it.createdAt,
    updated_at: it.updatedAt,
    closed_at: it.closedAt ?? null,
  });
  const issueOut = (it: FakeItem) => ({
    id: it.number * 10,
    number: it.number,
    html_url: html(it.number, it.kind),
    title: it.title,
    body: it.body,
    state: it.state,
    labels: labelsOut(it.labels),
    user: { login: it.user },
    created_at: it.createdAt,
    updated_at: it.updatedAt,
    closed_at: it.closedAt ?? null,
    ...(it.kind === 'pull' ? { pull_request: { url: `${url}/repos/${repo}/pulls/${it.number}`, merged_at: it.mergedAt ?? null } } : {}),
  });
  const commentOut = (c: FakeComment) => ({
    id: c.id,
    html_url: `${html(c.issue, items.get(c.issue)?.kind ?? 'issue')}#issuecomment-${c.id}`,
    body: c.body,
    user: { login: c.user },
    created_at: c.createdAt,
    updated_at: c.createdAt,
  });

  const add = (kind: 'pull' | 'issue', seed: FakePullSeed | FakeIssueSeed): FakeItem => {
    const at = now().toISOString();
    const s = seed as FakePullSeed;
    const it: FakeItem = {
      number: nextNumber++,
      kind,
      title: seed.title,
      body: seed.body ?? '',
      state: seed.state ?? 'open',
      merged: s.merged ?? false,
      labels: [...(seed.labels ?? [])],
      head: s.head ?? '',
      base: s.base ?? defaultBranch,
      user: seed.user ?? 'human',
      createdAt: seed.createdAt ?? at,
      updatedAt: s.updatedAt ?? seed.createdAt ?? at,
      ...(s.closedAt ? { closedAt: s.closedAt } : seed.state === 'closed' ? { closedAt: at } : {}),
      ...(s.merged ? { mergedAt: s.closedAt ?? at } : {}),
    };
    items.set(it.number, it);
    return it;
  };
  const touch = (it: FakeItem): void => {
    it.updatedAt = now().toISOString();
  };

  const prefix = (opts.apiPrefix ?? '').replace(/\/+$/, '');
  /** Serves one page of `list` with a `Link` header like GitHub's. */
  const page = (res: ServerResponse, req: { path: string; query: Record<string, string> }, list: unknown[]): void => {
    const perPage = Math.min(100, Math.max(1, Number(req.query.per_page ?? opts.defaultPerPage ?? 30) || 30));
    const pageNo = Math.max(1, Number(req.query.page ?? 1) || 1);
    const last = Math.max(1, Math.ceil(list.length / perPage));
    const slice = list.slice((pageNo - 1) * perPage, pageNo * perPage);
    const link = (p: number, rel: string): string => {
      const q = new URLSearchParams({ ...req.query, per_page: String(perPage), page: String(p) });
      return `<${url}${prefix}${req.path}?${q.toString()}>; rel="${rel}"`;
    };
    const links: string[] = [];
    if (pageNo < last) links.push(link(pageNo + 1, 'next'), link(last, 'last'));
    if (pageNo > 1) links.push(link(1, 'first'), link(pageNo - 1, 'prev'));
    json(res, 200, slice, links.length > 0 ? { link: links.join(', ') } : {});
  };

  const authorised = (auth: string | undefined, path: string): 'ok' | 'app' | 'no' => {
    const m = /^(?:token|bearer)\s+(.+)$/i.exec(auth ?? '');
    if (!m) return 'no';
    const t = m[1]!;
    if (path.startsWith('/app/')) return opts.app && verifyJwt(t, opts.app, now()) ? 'app' : 'no';
    if (t === token || installationTokens.has(t)) return 'ok';
    return 'no';
  };

  const route = async (method: string, path: string, query: Record<string, string>, body: Record<string, unknown>, res: ServerResponse): Promise<number> => {
    const send = (status: number, b: unknown, h?: Record<string, string>): number => {
      json(res, status, b, h);
      return status;
    };
    const appToken = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(path);
    if (appToken && method === 'POST') {
      if (!opts.app || Number(appToken[1]) !== opts.app.installationId) return send(404, { message: 'Not Found' });
      const t = `ghs_fake_${installationTokens.size + 1}`;
      installationTokens.add(t);
      return send(201, {
        token: t,
        expires_at: new Date(now().getTime() + 3_600_000).toISOString(),
        permissions: { contents: 'write', pull_requests: 'write', issues: 'write' },
      });
    }
    const m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path);
    if (!m || `${m[1]}/${m[2]}` !== repo) return send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    const rest = m[3] ?? '';
    const canWrite = method === 'GET' || permissions.push;
    if (!canWrite) return send(403, { message: 'Resource not accessible by personal access token' });
    if (rest === '' && method === 'GET') {
      return send(200, {
        full_name: repo,
        name: m[2],
        owner: { login: m[1] },
        default_branch: defaultBranch,
        private: true,
        permissions: { admin: permissions.admin ?? false, push: permissions.push, pull: permissions.pull },
      });
    }
    if (rest === '/pulls' && method === 'GET') {
      const state = query.state ?? 'open';
      const list = [...items.values()].filter((i) => i.kind === 'pull' && (state === 'all' || i.state === state)).sort((a, b) => b.number - a.number);
      page(res, { path, query }, list.map(pullOut));
      return 200;
    }
    if (rest === '/pulls' && method === 'POST') {
      const title = typeof body.title === 'string' ? body.title : '';
      const head = typeof body.head === 'string' ? body.head.replace(/^[^:]+:/, '') : '';
      const base = typeof body.base === 'string' ? body.base : '';
      if (!title || !head || !base) return send(422, { message: 'Validation Failed', errors: [{ resource: 'PullRequest', code: 'missing_field' }] });
      if (opts.branchExists && !(await opts.branchExists(head)))
        return send(422, { message: 'Validation Failed', errors: [{ resource: 'PullRequest', field: 'head', code: 'invalid' }] });
      if ([...items.values()].some((i) => i.kind === 'pull' && i.state === 'open' && i.head === head)) {
        return send(422, {
          message: 'Validation Failed',
          errors: [{ resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${repo.split('/')[0]}:${head}.` }],
        });
      }
      const it = add('pull', { title, body: typeof body.body === 'string' ? body.body : '', head, base, user: 'reprise-bot' });
      return send(201, pullOut(it));
    }
    const pull = /^\/pulls\/(\d+)(\/merge)?$/.exec(rest);
    if (pull) {
      const it = items.get(Number(pull[1]));
      if (!it || it.kind !== 'pull') return send(404, { message: 'Not Found' });
      if (pull[2] && method === 'PUT') {
        if (it.state !== 'open') return send(405, { message: 'Pull Request is not mergeable' });
        doMerge(it);
        return send(200, { merged: true, message: 'Pull Request successfully merged' });
      }
      if (method === 'GET') return send(200, pullOut(it));
      if (method === 'PATCH') {
        if (typeof body.title === 'string') it.title = body.title;
        if (typeof body.body === 'string') it.body = body.body;
        if (body.state === 'closed' && it.state === 'open') {
          it.state = 'closed';
          it.closedAt = now().toISOString();
        } else if (body.state === 'open' && it.state === 'closed' && !it.merged) {
          it.state = 'open';
          delete it.closedAt;
        }
        touch(it);
        return send(200, pullOut(it));
      }
    }
    if (rest === '/issues' && method === 'GET') {
      const state = query.state ?? 'open';
      const want = (query.labels ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const list = [...items.values()]
        .filter((i) => (state === 'all' || i.state === state) && want.every((l) => i.labels.includes(l)))
        .sort((a, b) => b.number - a.number);
      page(res, { path, query }, list.map(issueOut));
      return 200;
    }
    if (rest === '/issues' && method === 'POST') {
      const title = typeof body.title === 'string' ? body.title : '';
      if (!title) return send(422, { message: 'Validation Failed', errors: [{ resource: 'Issue', field: 'title', code: 'missing_field' }] });
      const labels = Array.isArray(body.labels) ? body.labels.map(String) : [];
      const it = add('issue', { title, body: typeof body.body === 'string' ? body.body : '', labels, user: 'reprise-bot' });
      return send(201, issueOut(it));
    }
    const sub = /^\/issues\/(\d+)(?:\/(comments|labels))?$/.exec(rest);
    if (sub) {
      const it = items.get(Number(sub[1]));
      if (!it) return send(404, { message: 'Not Found' });
      if (!sub[2] && method === 'GET') return send(200, issueOut(it));
      if (!sub[2] && method === 'PATCH') {
        if (typeof body.title === 'string') it.title = body.title;
        if (typeof body.body === 'string') it.body = body.body;
        if (body.state === 'closed' && it.state === 'open') {
          it.state = 'closed';
          it.closedAt = now().toISOString();
        }
        touch(it);
        return send(200, issueOut(it));
      }
      if (sub[2] === 'comments' && method === 'GET') {
        page(res, { path, query }, comments.filter((c) => c.issue === it.number).map(commentOut));
        return 200;
      }
      if (sub[2] === 'comments' && method === 'POST') {
        if (typeof body.body !== 'string' || body.body === '')
          return send(422, { message: 'Validation Failed', errors: [{ resource: 'IssueComment', field: 'body', code: 'missing_field' }] });
        const c: FakeComment = { id: nextCommentId++, issue: it.number, body: body.body, user: 'reprise-bot', createdAt: now().toISOString() };
        comments.push(c);
        touch(it);
        return send(201, commentOut(c));
      }
      if (sub[2] === 'labels' && method === 'POST') {
        const labels = Array.isArray(body.labels) ? body.labels.map(String) : [];
        for (const l of labels) if (!it.labels.includes(l)) it.labels.push(l);
        touch(it);
        return send(200, labelsOut(it.labels));
      }
    }
    return send(404, { message: 'Not Found' });
  };

  const doMerge = (it: FakeItem): void => {
    it.state = 'closed';
    it.merged = true;
    it.closedAt = it.mergedAt = now().toISOString();
    touch(it);
  };

  const takeFailure = (method: string, path: string): FakeFailure | undefined => {
    const i = failures.findIndex(
      (f) =>
        (!f.method || f.method.toUpperCase() === method) &&
        (!f.path || (typeof f.path === 'string' ? path === f.path || path.endsWith(f.path) : f.path.test(path))),
    );
    if (i < 0) return undefined;
    const f = failures[i]!;
    const left = (f.times ?? 1) - 1;
    if (left <= 0) failures.splice(i, 1);
    else f.times = left;
    return f;
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const u = new URL(req.url ?? '/', 'http://127.0.0.1');
        if (prefix) {
          if (!u.pathname.startsWith(`${prefix}/`)) {
            json(res, 404, { message: 'Not Found' });
            return;
          }
          u.pathname = u.pathname.slice(prefix.length);
        }
        const method = (req.method ?? 'GET').toUpperCase();
        const query = Object.fromEntries(u.searchParams.entries());
        const raw = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = raw ? JSON.parse(raw) : undefined;
        } catch {
          body = raw;
        }
        const rec: RecordedGitHubRequest = { method, path: u.pathname, query, body, authorization: req.headers.authorization, status: 0 };
        requests.push(rec);
        const failure = takeFailure(method, u.pathname);
        if (failure) {
          rec.status = failure.status;
          json(res, failure.status, { message: failure.message ?? `scripted ${failure.status}` }, failure.headers ?? {});
          return;
        }
        if (authorised(req.headers.authorization, u.pathname) === 'no') {
          rec.status = 401;
          json(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
          return;
        }
        try {
          rec.status = await route(method, u.pathname, query, body && typeof body === 'object' ? (body as Record<string, unknown>) : {}, res);
        } catch (err) {
          rec.status = 500;
          if (!res.headersSent) json(res, 500, { message: String(err) });
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;

  return {
    url,
    repo,
    requests,
    writes: () => requests.filter((r) => r.method !== 'GET' && r.method !== 'HEAD' && !r.path.startsWith('/app/')),
    items,
    comments,
    pulls: () => [...items.values()].filter((i) => i.kind === 'pull'),
    issues: () => [...items.values()].filter((i) => i.kind === 'issue'),
    commentsOn: (n) => comments.filter((c) => c.issue === n),
    addPull: (seed) => add('pull', seed),
    addIssue: (seed) => add('issue', seed),
    addComment: (n, b, user = 'human') => {
      const c: FakeComment = { id: nextCommentId++, issue: n, body: b, user, createdAt: now().toISOString() };
      comments.push(c);
      return c;
    },
    merge: (n) => {
      const it = items.get(n);
      if (!it || it.kind !== 'pull') throw new Error(`no pull request #${n}`);
      doMerge(it);
    },
    closeItem: (n) => {
      const it = items.get(n);
      if (!it) throw new Error(`no issue or pull request #${n}`);
      it.state = 'closed';
      it.closedAt = now().toISOString();
      touch(it);
    },
    fail: (f) => {
      failures.push({ ...f });
    },
    setPermissions: (p) => {
      permissions = p;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

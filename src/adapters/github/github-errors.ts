/**
 * What a failed GitHub call means for the caller once Octokit's plugins have given up: retry
 * later (5xx, network, rate limit — with when) or not (credentials, permissions, missing repo,
 * validation), and a message that says how to fix it.
 */
import { ForgeError } from '../../ports/forge.js';
import { redactText } from '../../core/redact.js';

interface HttpLike {
  status?: number;
  message?: string;
  response?: { headers?: Record<string, string | number | undefined>; data?: unknown };
}

const header = (e: HttpLike, name: string): string | undefined => {
  const v = e.response?.headers?.[name];
  return v === undefined ? undefined : String(v);
};

/** When a rate-limited response says to come back, if it is a rate limit at all. */
export function rateLimitRetryAt(err: unknown, now: Date): Date | undefined | 'not_rate_limited' {
  const e = err as HttpLike;
  if (e.status !== 403 && e.status !== 429) return 'not_rate_limited';
  const retryAfter = header(e, 'retry-after');
  if (retryAfter !== undefined && /^\d+$/.test(retryAfter.trim())) return new Date(now.getTime() + Number(retryAfter) * 1000);
  const remaining = header(e, 'x-ratelimit-remaining');
  const reset = header(e, 'x-ratelimit-reset');
  if (remaining === '0' && reset !== undefined && /^\d+$/.test(reset.trim())) return new Date(Number(reset) * 1000);
  if (e.status === 429 || remaining === '0' || /rate limit/i.test(e.message ?? '')) return undefined;
  return 'not_rate_limited';
}

/** The error as the domain sees it, with the fix in its message. */
export function toForgeError(err: unknown, repo: string, what: string, now: Date): ForgeError {
  if (err instanceof ForgeError) return err;
  const e = err as HttpLike;
  const status = e.status;
  // GitHub (or a proxy) may echo the request in its answer: masked before it is quoted anywhere.
  const detail = redactText((e.message ?? String(err)).split('\n')[0]!).slice(0, 300);
  const limited = rateLimitRetryAt(err, now);
  if (limited !== 'not_rate_limited') {
    return new ForgeError(`GitHub rate limit while trying to ${what}${limited ? `; it resets at ${limited.toISOString()}` : ''} (${detail})`, {
      status,
      retryable: true,
      ...(limited ? { retryAt: limited } : {}),
      cause: err,
    });
  }
  if (status === undefined || status >= 500 || status === 408) {
    return new ForgeError(`GitHub is unreachable or failing (${status ?? 'network'}) while trying to ${what}: ${detail}; will retry`, {
      status,
      retryable: true,
      cause: err,
    });
  }
  if (status === 401) {
    return new ForgeError(
      `GitHub rejected the credentials (401 ${detail}) while trying to ${what}: check GITHUB_TOKEN (or the App id, private key and installation id) — it may be expired or revoked`,
      { status, retryable: false, cause: err },
    );
  }
  if (status === 403) {
    return new ForgeError(
      `no permission on ${repo} to ${what} (403 ${detail}): the token needs write access to the repository's contents, pull requests and issues`,
      { status, retryable: false, cause: err },
    );
  }
  if (status === 404) {
    return new ForgeError(
      `${repo} (or the item) was not found while trying to ${what} (404): check REPRISE_GITHUB_REPO (owner/name) and that the token can see the repository`,
      { status, retryable: false, cause: err },
    );
  }
  const data = e.response?.data as { errors?: Array<{ message?: string; code?: string; field?: string }> } | undefined;
  const why = data?.errors ? redactText(data.errors.map((x) => x.message ?? [x.field, x.code].filter(Boolean).join(' ')).join('; ')) : undefined;
  return new ForgeError(`GitHub refused to ${what} (${status} ${detail}${why ? `: ${why}` : ''})`, { status, retryable: false, cause: err });
}

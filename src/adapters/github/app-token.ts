/**
 * GitHub App credentials → an installation token (the JWT is signed here with node:crypto:
 * RS256 over `{iat, exp, iss}`; no extra dependency for ten lines). The token is cached and
 * renewed five minutes before it expires.
 */
import { createSign } from 'node:crypto';

export interface AppCredentials {
  appId: string;
  /** PEM private key of the App. */
  privateKey: string;
  installationId: number;
}

/** The App's JWT (valid 9 minutes, backdated 60 s for clock drift, as GitHub advises). */
export function appJwt(app: AppCredentials, now: Date): string {
  const iat = Math.floor(now.getTime() / 1000) - 60;
  const enc = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  const unsigned = `${enc({ alg: 'RS256', typ: 'JWT' })}.${enc({ iat, exp: iat + 540, iss: app.appId })}`;
  const signature = createSign('RSA-SHA256').update(unsigned).sign(app.privateKey).toString('base64url');
  return `${unsigned}.${signature}`;
}

/** Exchanges the JWT for an installation token; `request` is the adapter's raw POST. */
export class InstallationTokens {
  #cached: { token: string; expiresAt: number } | undefined;
  #pending: Promise<string> | undefined;

  constructor(
    private readonly app: AppCredentials,
    private readonly exchange: (jwt: string, installationId: number) => Promise<{ token: string; expiresAt: string }>,
    private readonly now: () => Date,
  ) {}

  async get(): Promise<string> {
    const t = this.now().getTime();
    if (this.#cached && this.#cached.expiresAt - 5 * 60_000 > t) return this.#cached.token;
    this.#pending ??= (async () => {
      try {
        const r = await this.exchange(appJwt(this.app, this.now()), this.app.installationId);
        this.#cached = { token: r.token, expiresAt: Date.parse(r.expiresAt) || t + 3_600_000 };
        return r.token;
      } finally {
        this.#pending = undefined;
      }
    })();
    return this.#pending;
  }

  /** The forge said 401: the cached token is no good. */
  invalidate(): void {
    this.#cached = undefined;
  }
}

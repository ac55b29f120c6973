import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import * as oidc from 'openid-client';
import type { SettingsService } from '../platform/settings-service';
import { AppError, appError } from '../errors/app-error';
import type { AuthService, ClientInfo } from './auth-service';
import type { EnterpriseStore } from './ldap-oidc-store';
import type { ExternalUsers } from './ldap-oidc-users';
import { assertSameBrowser } from './oidc-cookie';

export interface OidcConfig {
  issuer: string;
  clientId: string;
  clientSecret: string | null;
  redirectUris: string[];
  scopes: string;
  usernameClaim: string;
}

/** How long a started sign-in may take at the provider. */
export const REQUEST_TTL_MS = 10 * 60_000;
/** Provider metadata is re-read this often (and whenever the settings change). */
const DISCOVERY_TTL_MS = 10 * 60_000;
const HTTP_TIMEOUT_SECONDS = 10;
export const OIDC_CALLBACK_PATH = '/api/auth/oidc/callback';

export async function readOidcConfig(settings: SettingsService): Promise<OidcConfig> {
  const get = <T>(key: string) => settings.get<T>(`oidc.${key}`);
  const [issuer, clientId, clientSecret, redirectUris, scopes, usernameClaim] = await Promise.all([
    get<string>('issuer'),
    get<string>('client_id'),
    get<string | null>('client_secret'),
    get<string[]>('redirect_uris'),
    get<string>('scopes'),
    get<string>('username_claim'),
  ]);
  return { issuer: issuer.trim(), clientId: clientId.trim(), clientSecret: clientSecret || null, redirectUris, scopes, usernameClaim };
}

/** What POST /api/auth/oidc/test reports (never the client secret). */
export interface OidcTestReport {
  ok: boolean;
  message: string;
  issuer: string;
  client_id: string;
  /** Where the provider must send browsers back: register it there. */
  callback_url: string;
  endpoints: { authorization: string | null; token: string | null; userinfo: string | null; jwks: string | null };
  warnings: string[];
}

export function oidcEnabled(config: Pick<OidcConfig, 'issuer' | 'clientId'>): boolean {
  return config.issuer !== '' && config.clientId !== '';
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

function isLoopback(url: URL): boolean {
  return ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname) || url.hostname.startsWith('127.');
}

/** Walks an error's causes for a network-level failure (refused, unresolvable, timed out). */
function networkFailure(err: unknown): string | null {
  for (
    let e = err as { name?: string; code?: string; message?: string; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth += 1
  ) {
    if (e.code === 'OAUTH_TIMEOUT' || e.name === 'TimeoutError') return `no answer within ${HTTP_TIMEOUT_SECONDS} s`;
    if (e.code && /^E[A-Z]+$/.test(e.code)) return e.code === 'ECONNREFUSED' ? 'connection refused' : e.code;
    if (e.code && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/.test(e.code)) {
      return `TLS: the issuer's certificate is not trusted (${e.code}); give the controller its CA with NODE_EXTRA_CA_CERTS`;
    }
    if (e.code === 'OAUTH_RESPONSE_IS_NOT_CONFORM') return 'unexpected HTTP status from the provider';
    if (e.code === 'OAUTH_RESPONSE_IS_NOT_JSON') return 'the provider did not answer with JSON';
  }
  return err instanceof TypeError ? err.message || 'network error' : null;
}

/** One line for a person: what the provider said or what failed validation. */
function loginFailure(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof oidc.ResponseBodyError) {
    return appError(
      'OIDC_LOGIN_FAILED',
      `The identity provider rejected the authorization code: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`,
    );
  }
  if (err instanceof oidc.AuthorizationResponseError) {
    return appError('OIDC_LOGIN_FAILED', `The identity provider answered ${err.error}${err.error_description ? `: ${err.error_description}` : ''}`);
  }
  const cause = (err as { cause?: { message?: string } }).cause?.message;
  return appError('OIDC_LOGIN_FAILED', `The identity provider's answer failed validation: ${(err as Error).message}${cause ? ` (${cause})` : ''}`);
}

/**
 * OIDC sign-in: authorization code flow with PKCE (S256), state and nonce. The pending request
 * (hashed state, code verifier, nonce, redirect_uri) is kept in the database with an expiry and
 * taken out by the callback, so any controller replica can finish a flow and no state is reused.
 */
export class OidcService {
  private discovered: { key: string; at: number; config: oidc.Configuration } | null = null;

  constructor(
    private readonly settings: SettingsService,
    private readonly auth: AuthService,
    private readonly users: ExternalUsers,
    private readonly store: EnterpriseStore,
    /** The base URL users reach (SWITCHBOARD_PUBLIC_URL); the callback is built from it. */
    private readonly publicUrl: () => string,
    private readonly log: FastifyBaseLogger,
  ) {}

  callbackUrl(): string {
    return `${this.publicUrl()}${OIDC_CALLBACK_PATH}`;
  }

  private async enabledConfig(): Promise<OidcConfig> {
    const config = await readOidcConfig(this.settings);
    if (!oidcEnabled(config))
      throw appError(
        'OIDC_NOT_CONFIGURED',
        'OIDC sign-in is not enabled on this service: a platform administrator sets oidc.issuer and oidc.client_id',
      );
    return config;
  }

  /** Provider metadata via discovery, cached per issuer and client. */
  private async provider(config: OidcConfig): Promise<oidc.Configuration> {
    const key = [config.issuer, config.clientId, sha256(config.clientSecret ?? '')].join(' ');
    if (this.discovered?.key === key && Date.now() - this.discovered.at < DISCOVERY_TTL_MS) return this.discovered.config;
    const discovered = await this.discover(config);
    this.discovered = { key, at: Date.now(), config: discovered };
    return discovered;
  }

  /** OpenID discovery at the issuer (https, or plain http on loopback only), uncached. */
  private async discover(config: OidcConfig): Promise<oidc.Configuration> {
    let issuer: URL;
    try {
      issuer = new URL(config.issuer);
    } catch {
      throw appError('OIDC_PROVIDER_UNAVAILABLE', `oidc.issuer is not a URL: ${config.issuer}`);
    }
    const plainHttp = issuer.protocol === 'http:';
    if (plainHttp && !isLoopback(issuer)) {
      throw appError(
        'OIDC_PROVIDER_UNAVAILABLE',
        `oidc.issuer must use https (plain http is accepted only for loopback addresses): ${config.issuer}`,
      );
    }
    let discovered: oidc.Configuration;
    try {
      discovered = await oidc.discovery(
        issuer,
        config.clientId,
        config.clientSecret ?? undefined,
        config.clientSecret ? oidc.ClientSecretPost(config.clientSecret) : oidc.None(),
        { timeout: HTTP_TIMEOUT_SECONDS, ...(plainHttp ? { execute: [oidc.allowInsecureRequests] } : {}) },
      );
    } catch (err) {
      const reason = networkFailure(err) ?? (err as Error).message;
      throw appError('OIDC_PROVIDER_UNAVAILABLE', `Cannot read the OpenID configuration of ${config.issuer}: ${reason}`);
    }
    discovered.timeout = HTTP_TIMEOUT_SECONDS;
    return discovered;
  }

  /**
   * POST /api/auth/oidc/test: discovery at the saved issuer, fresh (not the sign-in cache), and
   * the endpoints it found, or why it failed (unreachable, not an OpenID issuer, TLS).
   */
  async test(): Promise<OidcTestReport> {
    const config = await readOidcConfig(this.settings);
    const report = {
      issuer: config.issuer,
      client_id: config.clientId,
      callback_url: this.callbackUrl(),
      endpoints: { authorization: null, token: null, userinfo: null, jwks: null },
      warnings: [] as string[],
    };
    if (!oidcEnabled(config)) return { ok: false, message: 'OIDC is not configured: set oidc.issuer and oidc.client_id', ...report };
    if (!config.clientSecret) report.warnings.push('No oidc.client_secret: the controller signs in as a public client (PKCE only)');
    if (config.redirectUris.length === 0) report.warnings.push('oidc.redirect_uris is empty: no browser can be sent back after sign-in');
    let metadata: oidc.ServerMetadata;
    try {
      metadata = (await this.discover(config)).serverMetadata();
    } catch (err) {
      return { ok: false, message: (err as Error).message, ...report };
    }
    const endpoints = {
      authorization: metadata.authorization_endpoint ?? null,
      token: metadata.token_endpoint ?? null,
      userinfo: metadata.userinfo_endpoint ?? null,
      jwks: metadata.jwks_uri ?? null,
    };
    const missing = (['authorization', 'token', 'jwks'] as const).filter((k) => !endpoints[k]);
    if (missing.length > 0) {
      return { ok: false, message: `${metadata.issuer} is missing the ${missing.join(', ')} endpoint(s) sign-in needs`, ...report, endpoints };
    }
    return { ok: true, message: `Read the OpenID configuration of ${metadata.issuer}`, ...report, issuer: metadata.issuer, endpoints };
  }

  /** GET /api/auth/oidc/authorize: the provider URL to send the browser to, and the state to bind it with. */
  async authorizationUrl(redirectUri: string): Promise<{ url: string; state: string }> {
    const config = await this.enabledConfig();
    // Exact match only: no prefixes, no wildcards, so the tokens can go nowhere else.
    if (!config.redirectUris.includes(redirectUri)) {
      throw appError(
        'OIDC_REDIRECT_URI_NOT_ALLOWED',
        `redirect_uri '${redirectUri}' is not on the allow-list (oidc.redirect_uris / SWITCHBOARD_OIDC_REDIRECT_URIS)`,
      );
    }
    const provider = await this.provider(config);
    const state = oidc.randomState();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    await this.store.saveOidcRequest({
      state_hash: sha256(state),
      code_verifier: codeVerifier,
      nonce,
      redirect_uri: redirectUri,
      expires_at: new Date(Date.now() + REQUEST_TTL_MS),
    });
    const url = oidc.buildAuthorizationUrl(provider, {
      redirect_uri: this.callbackUrl(),
      scope: config.scopes,
      response_type: 'code',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    }).href;
    return { url, state };
  }

  /**
   * GET /api/auth/oidc/callback: checks the state, trades the code (with the PKCE verifier) for
   * tokens, validates the ID token, signs the user in and returns where to send the browser:
   * redirect_uri with the token pair in the fragment.
   */
  async finish(query: Record<string, string | undefined>, rawQuery: string, stateCookie: string | undefined, client: ClientInfo): Promise<string> {
    if (!query.state)
      throw appError('OIDC_INVALID_STATE', 'The callback has no state parameter; start the sign-in again at /api/auth/oidc/authorize');
    // Taken before the browser check: a state lured into another browser is spent, not left for later.
    const pending = await this.store.takeOidcRequest(sha256(query.state));
    if (!pending) throw appError('OIDC_INVALID_STATE');
    assertSameBrowser(query.state, stateCookie);
    if (query.error) {
      throw appError(
        'OIDC_LOGIN_FAILED',
        `The identity provider answered ${query.error}${query.error_description ? `: ${query.error_description}` : ''}`,
      );
    }
    const config = await this.enabledConfig();
    const provider = await this.provider(config);
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(provider, new URL(`${this.callbackUrl()}?${rawQuery}`), {
        pkceCodeVerifier: pending.code_verifier,
        expectedState: query.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      const network = networkFailure(err);
      if (network) throw appError('OIDC_PROVIDER_UNAVAILABLE', `The token request to ${config.issuer} failed: ${network}`);
      throw loginFailure(err);
    }
    const claims: Record<string, unknown> = { ...tokens.claims() };
    if (typeof claims[config.usernameClaim] !== 'string' && provider.serverMetadata().userinfo_endpoint) {
      // Many providers put profile claims only in userinfo (OIDC core 5.4).
      try {
        Object.assign(claims, await oidc.fetchUserInfo(provider, tokens.access_token, String(claims.sub)), { iss: claims.iss, sub: claims.sub });
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, 'OIDC userinfo request failed; using the ID token claims only');
      }
    }
    const text = (name: string) => (typeof claims[name] === 'string' ? (claims[name] as string).trim() : '');
    const username = (text(config.usernameClaim) || text('email') || text('sub')).slice(0, 256);
    const user = await this.users.resolve(
      { provider: 'oidc', username, externalId: `${String(claims.iss)}#${String(claims.sub)}`, email: text('email'), displayName: text('name') },
      client.ip,
    );
    if (!user.is_active) throw appError('ACCOUNT_DISABLED', 'This account is disabled; ask an administrator to enable it');
    const pair = await this.auth.startSession(user, 'admin_ui', client);
    const fragment = new URLSearchParams({
      access_token: pair.access_token,
      refresh_token: pair.refresh_token,
      token_type: pair.token_type,
      expires_in: String(pair.expires_in),
    });
    return `${pending.redirect_uri}#${fragment.toString()}`;
  }
}

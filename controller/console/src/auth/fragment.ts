/** The access and refresh tokens of a sign-in, as the auth routes answer them. */
export interface TokenPair {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

/** The sessionStorage key the single sign-on button sets: when this tab left for the identity provider. */
export const SSO_STARTED_KEY = 'switchboard.sso-started';

/** How long the identity provider may take (the controller keeps an OIDC sign-in request as long). */
export const SSO_PENDING_MS = 10 * 60_000;

/**
 * What a page's URL fragment carries for sign-in (the OIDC callback sends the browser back to
 * `<redirect_uri>#access_token=…&refresh_token=…&expires_in=…`): 'none' when it carries no token,
 * else the pair to sign in with, or 'refused' when this tab did not start a single sign-on within
 * SSO_PENDING_MS (`ssoStartedAt`, the time the sign-on button was pressed, or null). A link carrying
 * someone else's tokens (login CSRF: the operator would work, and type device credentials, in the
 * sender's account or organization) is refused.
 */
export function fragmentTokens(hash: string, ssoStartedAt: string | null, now: number): TokenPair | 'refused' | 'none' {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const access = params.get('access_token');
  const refresh = params.get('refresh_token');
  if (!access && !refresh) return 'none';
  const started = Number(ssoStartedAt);
  if (!access || !refresh || !ssoStartedAt || !Number.isFinite(started) || now < started || now - started > SSO_PENDING_MS) return 'refused';
  const expiresIn = Number(params.get('expires_in') ?? 3600);
  return { access_token: access, refresh_token: refresh, expires_in: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3600 };
}

import type { ErrorSpec } from '../spec';

/** Enterprise sign-in: LDAP, OIDC and SSH user certificates (controller/src/auth/ldap*, oidc*, ssh-ca*). */
export const enterpriseAuthErrors = {
  LDAP_NOT_CONFIGURED: {
    status: 400,
    message: 'LDAP sign-in is not enabled on this service',
    doc: 'POST /api/auth/ldap while ldap.url or ldap.base_dn is empty; a platform administrator sets them in /api/admin/settings.',
  },
  LDAP_UNAVAILABLE: {
    status: 503,
    message: 'The LDAP server cannot be reached',
    doc: 'Connection refused, no answer within ldap.timeout_seconds, or the TLS handshake failed; the message says which.',
  },
  LDAP_MISCONFIGURED: {
    status: 503,
    message: 'LDAP sign-in is misconfigured',
    doc: 'The service bind was refused, the base DN does not exist, or the user filter is invalid; POST /api/auth/ldap/test shows why.',
  },
  EXTERNAL_USERNAME_CONFLICT: {
    status: 409,
    message: 'This username already belongs to another account',
    doc: 'An LDAP or OIDC sign-in named a username held by a local account or another identity; it never takes over that account.',
  },
  OIDC_NOT_CONFIGURED: {
    status: 400,
    message: 'OIDC sign-in is not enabled on this service',
    doc: 'oidc.issuer or oidc.client_id is empty; a platform administrator sets them in /api/admin/settings.',
  },
  OIDC_REDIRECT_URI_NOT_ALLOWED: {
    status: 400,
    message: 'redirect_uri is not on the allow-list',
    doc: 'GET /api/auth/oidc/authorize with a redirect_uri that is not exactly one of oidc.redirect_uris (SWITCHBOARD_OIDC_REDIRECT_URIS).',
  },
  OIDC_INVALID_STATE: {
    status: 400,
    message: 'Unknown, expired or already used sign-in state; start the sign-in again',
    doc: 'The callback carried a state this service did not issue, one older than 10 minutes, or one already used.',
  },
  OIDC_STATE_NOT_BOUND: {
    status: 400,
    message: 'This browser did not start this sign-in; start the sign-in again from this browser',
    doc:
      "The callback came without the HttpOnly state cookie /oidc/authorize set, or with another flow's: the sign-in was started elsewhere " +
      '(login CSRF) or cookies are blocked.',
  },
  OIDC_LOGIN_FAILED: {
    status: 401,
    message: 'The identity provider did not confirm the sign-in',
    doc: 'The provider answered with an error, rejected the authorization code, or returned an ID token that failed validation.',
  },
  OIDC_PROVIDER_UNAVAILABLE: {
    status: 503,
    message: 'The OpenID provider cannot be reached',
    doc: 'Discovery or the token request to oidc.issuer failed at the network level or timed out.',
  },
  SSH_CERTIFICATE_NOT_PERMITTED: {
    status: 403,
    message: 'Your roles do not allow an SSH certificate',
    doc:
      'POST /api/auth/login with public_key by a user whose roles lack the ssh.certificate permission, or (except platform administrators) ' +
      'whose username is a reserved system account name made before such names were refused; no session is opened.',
  },
  ACCOUNT_DISABLED: { status: 403, message: 'This account is disabled', doc: 'An OIDC sign-in for a user an administrator disabled.' },
  INVALID_SSH_PUBLIC_KEY: {
    status: 400,
    message: 'public_key is not a valid OpenSSH public key',
    doc: 'POST /api/auth/login with a public_key that is not one line of "type base64 [comment]" of an RSA (2048 bits or more), ECDSA or Ed25519 key.',
  },
} satisfies Record<string, ErrorSpec>;

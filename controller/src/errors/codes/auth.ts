import type { ErrorSpec } from '../spec';

export const authErrors = {
  AUTH_REQUIRED: { status: 401, message: 'Authentication required', doc: 'No bearer token on a protected endpoint.' },
  INVALID_TOKEN: { status: 401, message: 'Invalid or expired token', doc: 'The access token is malformed, expired, or its session was revoked.' },
  INVALID_CREDENTIALS: { status: 401, message: 'Invalid credentials', doc: 'Wrong username or password, or a non-local account sent to /login.' },
  INVALID_REFRESH_TOKEN: { status: 401, message: 'Invalid or expired refresh token', doc: 'The refresh token is unknown, expired or revoked.' },
  REFRESH_TOKEN_REUSED: {
    status: 401,
    message: 'Refresh token has already been used; the session has been revoked',
    doc: 'A refresh token was presented twice: treated as stolen, its whole session is revoked.',
  },
  FORBIDDEN: { status: 403, message: 'Insufficient permissions', doc: 'The caller lacks the permission the endpoint needs.' },
  SEAT_LIMIT_REACHED: {
    status: 409,
    message: 'seat_limit_reached: every terminal license seat is in use',
    doc:
      "A terminal login found no free license seat: other users hold every seat, or the user's organization holds its share " +
      "(licenses.terminal_seats_per_org). A user's own earlier terminal session never counts: the new login replaces it.",
  },
  LOGIN_LOCKED_OUT: {
    status: 429,
    message: 'Too many failed login attempts. Please try again later.',
    doc: 'The failed-login limit for this client IP was reached inside the window.',
  },
  RATE_LIMITED: {
    status: 429,
    message: 'Too many failed login attempts. Please try again later.',
    doc: 'The per-minute request limit on /api/auth/* for this client IP was exceeded (API.md uses one message for both 429 cases).',
  },
  WEAK_PASSWORD: {
    status: 400,
    message: 'Password does not meet the rules',
    doc: 'New passwords need 12 or more characters and must not be a common password.',
  },
  CURRENT_PASSWORD_INCORRECT: { status: 400, message: 'Current password is incorrect', doc: 'PUT /api/auth/password with a wrong current_password.' },
  NOT_LOCAL_ACCOUNT: {
    status: 400,
    message: 'Only local accounts have a password here',
    doc: 'LDAP and OIDC accounts change passwords at their provider.',
  },
  SESSION_NOT_FOUND: { status: 404, message: 'Session not found', doc: "No such session among the caller's sessions." },
  ORG_NOT_FOUND: { status: 404, message: 'Organization not found', doc: 'No organization has that id.' },
} satisfies Record<string, ErrorSpec>;

import type { AuditService } from '../platform/audit-service';
import type { SettingsService } from '../platform/settings-service';
import { appError } from '../errors/app-error';
import { type AuthStore, type LockoutKey, type UserRow } from './auth-store';
import { GuessQueue, GuessQueueFull, guessKeys } from './guesses';
import { hashPassword, passwordProblem, verifyPassword } from './passwords';
import { permissionsFor } from './permissions';
import { type TokenSigner, hashToken, newRefreshToken } from './tokens';

import type { ClientInfo } from '../http/client-info';
export type { ClientInfo };

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

export interface AuthContext {
  userId: string;
  username: string;
  orgId: string;
  homeOrgId: string;
  sessionId: string;
  isPlatformAdmin: boolean;
  roles: string[];
  permissions: string[];
}

const HOUR = 3600;
const DAY = 86400;
/** How long the session's latest spent refresh token is still taken (two tabs refreshing at once). */
export const REFRESH_GRACE_SECONDS = 10;

/** Sign-in, token rotation, sessions and the failed-login lockout. */
export class AuthService {
  private lockout: Promise<{ limit: number; windowMs: number }> | null = null;
  private readonly guesses = new GuessQueue();

  constructor(
    readonly store: AuthStore,
    private readonly signer: TokenSigner,
    private readonly settings: SettingsService,
    private readonly audit: AuditService,
  ) {}

  private async lifetimes(): Promise<{ access: number; refresh: number }> {
    const lifetimes = await this.settings.getMany(['session.access_token_hours', 'session.refresh_token_days']);
    return { access: (lifetimes['session.access_token_hours'] as number) * HOUR, refresh: (lifetimes['session.refresh_token_days'] as number) * DAY };
  }

  /**
   * The failed-login limit and window, read once (API.md: changes to the rate limit settings take
   * effect after the API restarts), like the request rate limit.
   */
  private lockoutPolicy(): Promise<{ limit: number; windowMs: number }> {
    this.lockout ??= this.settings.getMany(['security.rate_limit.failed_login_limit', 'security.rate_limit.failed_login_window_minutes']).then(
      (policy) => ({
        limit: policy['security.rate_limit.failed_login_limit'] as number,
        windowMs: (policy['security.rate_limit.failed_login_window_minutes'] as number) * 60_000,
      }),
      (err: unknown) => {
        this.lockout = null; // not read: the next login tries again
        throw err;
      },
    );
    return this.lockout;
  }

  /**
   * 429 when this IP, or this username from any address, reached the failed-login limit inside
   * the window. The lockout ends when enough failures have left the window to bring the count
   * under the limit again. Unknown usernames count and lock the same way, so the answer never
   * tells whether an account exists.
   */
  async assertNotLockedOut(key: LockoutKey): Promise<void> {
    const { limit, windowMs } = await this.lockoutPolicy();
    const unlocksAt = await this.store.lockoutEnds(key, new Date(Date.now() - windowMs), limit, windowMs);
    if (!unlocksAt) return;
    const retryAfter = Math.max(1, Math.ceil((unlocksAt.getTime() - Date.now()) / 1000));
    throw appError('LOGIN_LOCKED_OUT', undefined, { retry_after_secs: retryAfter });
  }

  /**
   * Runs `check` of one password guess under the lockout: after the guesses before it on the same
   * address or username (guesses.ts), refused while either is locked out. `check` records the
   * failure of a wrong guess (failLogin), so the next guess in line counts it.
   */
  async asGuess<T>(client: ClientInfo, username: string, check: () => Promise<T>): Promise<T> {
    const locked = async () => {
      await this.assertNotLockedOut({ ip: client.ip });
      await this.assertNotLockedOut({ username });
    };
    // A locked username is refused at once, not after the guesses queued on it (the address was
    // checked by the route's lockout hook a moment ago); both are checked again in turn.
    await this.assertNotLockedOut({ username });
    try {
      return await this.guesses.run(guessKeys(client.ip, username), async () => {
        await locked();
        return check();
      });
    } catch (err) {
      if (err instanceof GuessQueueFull)
        throw appError('RATE_LIMITED', `Too many requests: ${err.message}; try again shortly`, { retry_after_secs: 1 });
      throw err;
    }
  }

  /** Records a failed login and answers 401 saying how many attempts remain. */
  async failLogin(client: ClientInfo, username: string | null): Promise<never> {
    await this.store.recordFailedLogin(client.ip, username);
    await this.audit.record({ kind: 'auth.login_failed', username, ip: client.ip });
    const { limit, windowMs } = await this.lockoutPolicy();
    const since = new Date(Date.now() - windowMs);
    const byAddress = await this.store.countFailedLogins({ ip: client.ip }, since);
    const byUsername = username ? await this.store.countFailedLogins({ username }, since) : 0;
    const remaining = Math.max(0, limit - Math.max(byAddress, byUsername));
    throw appError('INVALID_CREDENTIALS', `Invalid credentials (${remaining} attempt${remaining === 1 ? '' : 's'} remaining before lockout)`, {
      attempts_remaining: remaining,
    });
  }

  /** `beforeSession` may refuse a user whose password is right, before any session opens. */
  async loginLocal(
    username: string,
    password: string,
    clientType: string,
    client: ClientInfo,
    beforeSession?: (user: UserRow) => void,
  ): Promise<{ pair: TokenPair; user: UserRow; sessionId: string }> {
    const local = await this.asGuess(client, username, async () => {
      const user = await this.store.findUserByUsername(username);
      const found = user?.auth_provider === 'local' ? user : undefined;
      const ok = await verifyPassword(found?.password_hash ?? null, password);
      return found && ok && found.is_active ? found : this.failLogin(client, username);
    });
    beforeSession?.(local);
    return { ...(await this.openSession(local, clientType, client)), user: local };
  }

  /** Opens a session for an authenticated user (local, LDAP or OIDC) and returns its first token pair. */
  async startSession(user: UserRow, clientType: string, client: ClientInfo): Promise<TokenPair> {
    return (await this.openSession(user, clientType, client)).pair;
  }

  private async openSession(user: UserRow, clientType: string, client: ClientInfo): Promise<{ pair: TokenPair; sessionId: string }> {
    const { access, refresh } = await this.lifetimes();
    const refreshToken = newRefreshToken();
    const expiresAt = new Date(Date.now() + refresh * 1000);
    const terminal = clientType === 'terminal';
    // A seat is scarce and platform-wide: an account that may do nothing (an LDAP or OIDC user
    // provisioned without a role) must not hold one, nor take the last ones from everybody else.
    if (terminal && permissionsFor(user.roles, user.is_platform_admin).length === 0) {
      throw appError('FORBIDDEN', 'A terminal login takes a license seat, and your account has no role yet: ask an administrator for one');
    }
    const limits = terminal ? await this.settings.getMany(['licenses.terminal_seats', 'licenses.terminal_seats_per_org']) : null;
    const seats = limits
      ? {
          total: limits['licenses.terminal_seats'] as number,
          perOrg: limits['licenses.terminal_seats_per_org'] as number | null,
          orgId: user.home_org_id,
        }
      : null;
    const opened = await this.store.openSession(
      { user_id: user.id, client_type: clientType, user_agent: client.userAgent.slice(0, 512), ip_address: client.ip, expires_at: expiresAt },
      hashToken(refreshToken),
      seats,
    );
    if ('refused' in opened) {
      throw appError(
        'SEAT_LIMIT_REACHED',
        opened.refused === 'org'
          ? `seat_limit_reached: your organization uses all ${seats?.perOrg} of its terminal license seats (licenses.terminal_seats_per_org); ` +
              'a seat frees when one of its terminal users logs out'
          : `seat_limit_reached: all ${seats?.total} terminal license seats are in use`,
      );
    }
    const sessionId = opened.id;
    // Only this account's failures are forgiven: signing in to one's own account must not
    // reset the count of guesses made from the same address against other accounts.
    await this.store.clearFailedLogins(client.ip, user.username);
    await this.audit.record({
      kind: 'auth.login',
      orgId: user.home_org_id,
      userId: user.id,
      username: user.username,
      ip: client.ip,
      // A terminal login ends the user's earlier terminal session (one seat per user): counted here.
      details: { client_type: clientType, provider: user.auth_provider, ...(opened.replaced ? { replaced_sessions: opened.replaced } : {}) },
    });
    const accessToken = await this.signer.sign({ sub: user.id, sid: sessionId, org: user.home_org_id }, access);
    return { pair: { access_token: accessToken, refresh_token: refreshToken, token_type: 'Bearer', expires_in: access }, sessionId };
  }

  /**
   * Single use with rotation; a replayed token revokes its whole session (stolen-token detection).
   * One exception: the session's latest spent token is taken again for REFRESH_GRACE_SECONDS, so
   * two tabs refreshing at once both get a pair for the session instead of logging the user out.
   */
  async refresh(refreshToken: string, client: ClientInfo): Promise<TokenPair> {
    const hash = hashToken(refreshToken);
    const row = await this.store.findRefreshToken(hash, REFRESH_GRACE_SECONDS);
    if (!row || row.session_revoked_at || row.expires_at.getTime() <= Date.now()) throw appError('INVALID_REFRESH_TOKEN');
    const reuse = async (): Promise<never> => {
      await this.store.revokeSession(row.session_id, 'refresh token reuse');
      const owner = await this.store.findUserById(row.user_id);
      await this.audit.record({
        kind: 'auth.refresh_reuse',
        orgId: owner?.home_org_id,
        userId: row.user_id,
        username: owner?.username,
        ip: client.ip,
        details: { session_id: row.session_id },
      });
      throw appError('REFRESH_TOKEN_REUSED');
    };
    if (row.used_at && !row.in_grace) return reuse();
    const user = await this.store.findUserById(row.user_id);
    if (!user?.is_active) throw appError('INVALID_REFRESH_TOKEN');
    const { access, refresh } = await this.lifetimes();
    const next = newRefreshToken();
    const nextExpiry = new Date(Date.now() + refresh * 1000);
    if (!(await this.store.rotateRefreshToken(row, hashToken(next), nextExpiry))) {
      // Another request spent it between our read and our update: the same grace applies.
      const spent = await this.store.findRefreshToken(hash, REFRESH_GRACE_SECONDS);
      if (!spent?.in_grace) return reuse();
      await this.store.rotateRefreshToken(spent, hashToken(next), nextExpiry);
    }
    // A refresh always lands in the home organization (API.md: it puts an admin back home).
    const accessToken = await this.signer.sign({ sub: user.id, sid: row.session_id, org: user.home_org_id }, access);
    return { access_token: accessToken, refresh_token: next, token_type: 'Bearer', expires_in: access };
  }

  /** Resolves an access token to its caller, refusing revoked sessions and disabled users at once. */
  async authenticate(token: string): Promise<AuthContext | null> {
    return (await this.authenticateAlong(token))?.auth ?? null;
  }

  /**
   * authenticate, also reading `along` (a SQL expression over the token's organization, every `?`
   * being its id) in the same statement as the session check; its value counts only when the
   * caller is let in.
   */
  async authenticateAlong(token: string, along?: string): Promise<{ auth: AuthContext; along: unknown } | null> {
    const claims = await this.signer.verify(token);
    if (!claims) return null;
    const row = await this.store.findSessionUser(claims.sid, claims.sub, along ? { sql: along, orgId: claims.org } : undefined);
    if (!row || row.session_revoked_at || !row.is_active || row.session_expires_at.getTime() <= Date.now()) return null;
    if (claims.org !== row.home_org_id && !row.is_platform_admin) return null;
    const auth = {
      userId: row.id,
      username: row.username,
      orgId: claims.org,
      homeOrgId: row.home_org_id,
      sessionId: row.session_id,
      isPlatformAdmin: row.is_platform_admin,
      roles: row.roles,
      permissions: permissionsFor(row.roles, row.is_platform_admin),
    };
    return { auth, along: row.along };
  }

  async logout(auth: AuthContext, client: ClientInfo): Promise<number> {
    const revoked = await this.store.revokeUserSessions(auth.userId, 'logout');
    await this.audit.record({
      kind: 'auth.logout',
      orgId: auth.orgId,
      userId: auth.userId,
      username: auth.username,
      ip: client.ip,
      details: { sessions_revoked: revoked },
    });
    return revoked;
  }

  async changePassword(auth: AuthContext, currentPassword: string, newPassword: string, client: ClientInfo): Promise<void> {
    const user = await this.store.findUserById(auth.userId);
    if (!user || user.auth_provider !== 'local') throw appError('NOT_LOCAL_ACCOUNT');
    // A guess at the current password is a login guess: refused while the address or the
    // username is locked out, and a failure when wrong, so a stolen access token cannot be used
    // to try passwords without limit (nor from many addresses).
    await this.asGuess(client, user.username, async () => {
      if (await verifyPassword(user.password_hash, currentPassword)) return;
      await this.store.recordFailedLogin(client.ip, user.username);
      await this.audit.record({ kind: 'auth.password_change_failed', orgId: auth.orgId, userId: user.id, username: user.username, ip: client.ip });
      throw appError('CURRENT_PASSWORD_INCORRECT');
    });
    const problem = passwordProblem(newPassword, user.username);
    if (problem) throw appError('WEAK_PASSWORD', problem);
    await this.store.setPassword(user.id, await hashPassword(newPassword));
    // A changed password ends every other session: whoever knew the old one is out.
    await this.store.revokeUserSessions(user.id, 'password changed', auth.sessionId);
    await this.audit.record({ kind: 'auth.password_changed', orgId: auth.orgId, userId: user.id, username: user.username, ip: client.ip });
  }

  async switchOrg(
    auth: AuthContext,
    orgId: string,
    client: ClientInfo,
  ): Promise<{ access_token: string; token_type: 'Bearer'; expires_in: number; active_org_id: string }> {
    if (!(await this.store.organizationExists(orgId))) throw appError('ORG_NOT_FOUND');
    const { access } = await this.lifetimes();
    const accessToken = await this.signer.sign({ sub: auth.userId, sid: auth.sessionId, org: orgId }, access);
    await this.audit.record({
      kind: 'auth.org_switched',
      orgId,
      userId: auth.userId,
      username: auth.username,
      ip: client.ip,
      details: { from_org_id: auth.orgId, to_org_id: orgId },
    });
    return { access_token: accessToken, token_type: 'Bearer', expires_in: access, active_org_id: orgId };
  }
}

import type { Knex } from 'knex';
import { hotQuery, UUID, type Db } from '../db/knex';
import { Batcher } from '../../../shared/src/jobs/limit';
import { ACCESS_EVENT, LIVE_CHANNEL } from '../db/live-channel';

export interface UserRow {
  id: string;
  home_org_id: string;
  username: string;
  email: string;
  display_name: string;
  password_hash: string | null;
  auth_provider: string;
  roles: string[];
  is_active: boolean;
  is_platform_admin: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface SessionUserRow extends Pick<UserRow, 'id' | 'home_org_id' | 'username' | 'roles' | 'is_active' | 'is_platform_admin'> {
  session_id: string;
  session_revoked_at: Date | null;
  session_expires_at: Date;
  client_type: string;
  /** The value read along with the session check, when one was asked for. */
  along?: unknown;
}

export interface RefreshRow {
  id: string;
  session_id: string;
  used_at: Date | null;
  expires_at: Date;
  session_revoked_at: Date | null;
  user_id: string;
  client_type: string;
  /** Spent, but moments ago and as the session's latest token: another tab refreshing at once. */
  in_grace: boolean | null;
}

const SESSION_USER_COLUMNS = `u.id, u.home_org_id, u.username, u.roles, u.is_active, u.is_platform_admin,
      s.id AS session_id, s.revoked_at AS session_revoked_at, s.expires_at AS session_expires_at, s.client_type`;

/** The session checks of the requests of the moment, in one statement: a row per found request (`ord`). */
const SESSION_USERS_SQL = `SELECT r.ord, ${SESSION_USER_COLUMNS}
      FROM unnest(?::int[], ?::uuid[], ?::uuid[]) AS r(ord, session_id, user_id)
      JOIN sessions s ON s.id = r.session_id AND s.user_id = r.user_id JOIN users u ON u.id = s.user_id`;

const sessionUserTexts = new Map<string, string>();

/** The session check of one request that reads a value along with it (a route's config.alongSession). */
function sessionUserAlongSql(along: string): string {
  let text = sessionUserTexts.get(along);
  if (text === undefined) {
    sessionUserTexts.set(
      along,
      (text = `SELECT ${SESSION_USER_COLUMNS}, (${along}) AS along
      FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = ? AND s.user_id = ? LIMIT 1`),
    );
  }
  return text;
}

const ACTIVE = (q: Knex.QueryBuilder) => q.whereNull('revoked_at').where('expires_at', '>', new Date());

/** SQL for users, sessions, refresh tokens and failed logins. */
/** Failed logins are counted per client address and, separately, per username (any address). */
export type LockoutKey = { ip: string } | { username: string };

function failuresOf(query: Knex.QueryBuilder, key: LockoutKey): Knex.QueryBuilder {
  return 'ip' in key ? query.where('ip_address', key.ip) : query.whereRaw('lower(username) = lower(?)', [key.username]);
}

export class AuthStore {
  constructor(private readonly db: Db) {}

  findUserByUsername(username: string): Promise<UserRow | undefined> {
    return this.db('users').whereRaw('lower(username) = lower(?)', [username]).first();
  }

  findUserById(id: string): Promise<UserRow | undefined> {
    return this.db('users').where({ id }).first();
  }

  /**
   * Session checks gathered while the previous batch is on its way (Batcher): requests that
   * arrive together (a script's parallel calls, a console page's) share one statement, and each
   * check is still read after its request arrived, never answered from an earlier read.
   */
  private readonly sessionChecks = new Batcher<{ sessionId: string; userId: string }, SessionUserRow | undefined>(
    (keys) => this.findSessionUsers(keys),
    500,
  );

  /**
   * The session and its user together, on every authenticated request: a fixed text run as a
   * prepared statement straight on a pooled connection (hotQuery), with only the columns needed,
   * for the requests of the moment at once. `along` adds one value the route reads in the same
   * statement (a route's config.alongSession, auth/route-guard.ts): a SQL expression whose every
   * `?` is `orgId`, answered as the column along; such a check runs on its own.
   */
  async findSessionUser(sessionId: string, userId: string, along?: { sql: string; orgId: string }): Promise<SessionUserRow | undefined> {
    // Ids come from a token we signed; anything else cannot name a session (and must not fail a batch).
    if (!UUID.test(sessionId) || !UUID.test(userId)) return undefined;
    if (!along) return this.sessionChecks.add({ sessionId, userId });
    const values = [...Array.from(along.sql.matchAll(/\?/g), () => along.orgId), sessionId, userId];
    return (await hotQuery<SessionUserRow>(this.db, sessionUserAlongSql(along.sql), values))[0];
  }

  private async findSessionUsers(keys: { sessionId: string; userId: string }[]): Promise<(SessionUserRow | undefined)[]> {
    const keyOf = (k: { sessionId: string; userId: string }) => `${k.sessionId}/${k.userId}`;
    const unique = [...new Map(keys.map((k) => [keyOf(k), k])).values()];
    const rows = await hotQuery<SessionUserRow & { ord: number }>(this.db, SESSION_USERS_SQL, [
      unique.map((_, i) => i),
      unique.map((k) => k.sessionId),
      unique.map((k) => k.userId),
    ]);
    const found = new Map(rows.map(({ ord, ...row }) => [keyOf(unique[ord]), row]));
    return keys.map((k) => found.get(keyOf(k)));
  }

  /**
   * Opens a session with its first refresh token in one transaction. A terminal session (`seats`
   * given) takes a license seat: under one advisory lock, so two logins cannot take the last seat,
   * it first checks the seats held by other users (every organization's, and the user's own
   * organization's against `seats.perOrg` when set); with none free it answers which limit refused
   * and changes nothing. Otherwise the user's earlier terminal sessions are revoked (one terminal
   * session, one seat, per user: signing in again from a terminal frees the old seat) and the new
   * session opens.
   */
  async openSession(
    session: { user_id: string; client_type: string; user_agent: string; ip_address: string; expires_at: Date },
    refreshHash: string,
    seats: { total: number; perOrg: number | null; orgId: string } | null,
  ): Promise<{ id: string; replaced: number } | { refused: 'total' | 'org' }> {
    return this.db.transaction(async (trx) => {
      let replaced = 0;
      if (seats !== null) {
        await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', ['switchboard.terminal_seats']);
        if ((await this.countSeatsHeld(trx, { exceptUserId: session.user_id })) >= seats.total) return { refused: 'total' as const };
        if (seats.perOrg !== null && (await this.countSeatsHeld(trx, { exceptUserId: session.user_id, orgId: seats.orgId })) >= seats.perOrg) {
          return { refused: 'org' as const };
        }
        replaced = (
          await this.revokeIn(trx, (q) => q.where({ user_id: session.user_id, client_type: 'terminal' }), 'replaced by a new terminal login')
        ).length;
      }
      const id = await this.createSession(trx, session);
      await this.addRefreshToken(trx, id, refreshHash, session.expires_at);
      return { id, replaced };
    });
  }

  /** Spends the token (unless already spent, in the grace) and adds its successor; false when it lost a race. */
  async rotateRefreshToken(row: RefreshRow, nextHash: string, expiresAt: Date): Promise<boolean> {
    return this.db.transaction(async (trx) => {
      if (!row.used_at && !(await this.consumeRefreshToken(trx, row.id))) return false;
      await this.addRefreshToken(trx, row.session_id, nextHash, expiresAt);
      return true;
    });
  }

  async createSession(
    trx: Knex.Transaction,
    session: { user_id: string; client_type: string; user_agent: string; ip_address: string; expires_at: Date },
  ): Promise<string> {
    const [row] = await trx('sessions').insert(session).returning('id');
    return row.id;
  }

  async addRefreshToken(db: Knex | Knex.Transaction, sessionId: string, tokenHash: string, expiresAt: Date): Promise<void> {
    await db('refresh_tokens').insert({ session_id: sessionId, token_hash: tokenHash, expires_at: expiresAt });
    await db('sessions').where({ id: sessionId }).update({ expires_at: expiresAt });
  }

  /**
   * The token with its session; in_grace tells whether it was spent less than `graceSeconds` ago
   * (database time) and is the session's most recently spent token.
   */
  findRefreshToken(tokenHash: string, graceSeconds: number): Promise<RefreshRow | undefined> {
    return this.db('refresh_tokens as r')
      .join('sessions as s', 's.id', 'r.session_id')
      .where('r.token_hash', tokenHash)
      .first(
        'r.id',
        'r.session_id',
        'r.used_at',
        'r.expires_at',
        's.revoked_at as session_revoked_at',
        's.user_id',
        's.client_type',
        this.db.raw(
          `(r.used_at > now() - make_interval(secs => ?) AND NOT EXISTS (
            SELECT 1 FROM refresh_tokens later WHERE later.session_id = r.session_id AND later.used_at > r.used_at)) AS in_grace`,
          [graceSeconds],
        ),
      );
  }

  /** Marks a refresh token used; false when another request already used it (a race or a replay). */
  async consumeRefreshToken(trx: Knex.Transaction, id: string): Promise<boolean> {
    const updated = await trx('refresh_tokens').where({ id }).whereNull('used_at').update({ used_at: trx.fn.now() });
    return updated === 1;
  }

  async revokeSession(sessionId: string, reason: string, userId?: string): Promise<number> {
    return this.revokeSessionsWhere((q) => q.where({ id: sessionId }).modify((w) => (userId ? w.where({ user_id: userId }) : w)), reason);
  }

  async revokeUserSessions(userId: string, reason: string, exceptSessionId?: string): Promise<number> {
    return this.revokeSessionsWhere(
      (q) => q.where({ user_id: userId }).modify((w) => (exceptSessionId ? w.whereNot({ id: exceptSessionId }) : w)),
      reason,
    );
  }

  private async revokeSessionsWhere(match: (q: Knex.QueryBuilder) => void, reason: string): Promise<number> {
    return this.db.transaction(async (trx) => (await this.revokeIn(trx, match, reason)).length);
  }

  /**
   * Revokes the matching live sessions and, in the same transaction, the SSH certificates issued
   * to them, which puts those on the key revocation list: a session's end is its certificate's.
   * Their users' live connections are told on commit (announceAccessChange).
   */
  private async revokeIn(trx: Knex.Transaction, match: (q: Knex.QueryBuilder) => void, reason: string): Promise<{ id: string; user_id: string }[]> {
    const revoked: { id: string; user_id: string }[] = await trx('sessions')
      .modify(match)
      .whereNull('revoked_at')
      .update({ revoked_at: trx.fn.now(), revoked_reason: reason })
      .returning(['id', 'user_id']);
    if (revoked.length) {
      await trx('ssh_certificates')
        .whereIn(
          'session_id',
          revoked.map((r) => r.id),
        )
        .whereNull('revoked_at')
        .update({ revoked_at: trx.fn.now() });
      await this.announceAccessChange(
        revoked.map((r) => r.user_id),
        trx,
      );
    }
    return revoked;
  }

  /**
   * Tells every controller replica (over the live hub's LISTEN channel, delivered when the
   * transaction commits) that these users' sessions or permissions changed, so that their open
   * /api/live connections are checked again at once rather than at the next periodic check.
   */
  async announceAccessChange(userIds: string[], db: Knex | Knex.Transaction = this.db): Promise<void> {
    const unique = [...new Set(userIds)];
    // A NOTIFY payload holds under 8000 bytes: 100 ids of 39 characters each stay well inside.
    for (let i = 0; i < unique.length; i += 100) {
      await db.raw('SELECT pg_notify(?, ?)', [LIVE_CHANNEL, JSON.stringify({ type: ACCESS_EVENT, user_ids: unique.slice(i, i + 100) })]);
    }
  }

  listActiveSessions(userId: string) {
    return this.db('sessions')
      .where({ user_id: userId })
      .modify(ACTIVE)
      .orderBy('created_at', 'desc')
      .select('id', 'created_at', 'expires_at', 'user_agent', 'ip_address', 'client_type');
  }

  /**
   * Terminal license seats held, counted under the caller's advisory lock: live terminal sessions
   * (not revoked, not expired) of active users. A disabled user's sessions hold none, whatever
   * state they were left in; a deleted user's are gone with the user.
   */
  private async countSeatsHeld(trx: Knex.Transaction, scope: { exceptUserId: string; orgId?: string }): Promise<number> {
    const [{ count }] = await trx('sessions as s')
      .join('users as u', 'u.id', 's.user_id')
      .where('s.client_type', 'terminal')
      .whereNull('s.revoked_at')
      .where('s.expires_at', '>', trx.fn.now())
      .where('u.is_active', true)
      .whereNot('s.user_id', scope.exceptUserId)
      .modify((q) => (scope.orgId ? q.where('u.home_org_id', scope.orgId) : q))
      .count<{ count: number }[]>({ count: '*' });
    return Number(count);
  }

  async recordFailedLogin(ip: string, username: string | null): Promise<void> {
    await this.db('failed_logins').insert({ ip_address: ip, username });
  }

  async countFailedLogins(key: LockoutKey, since: Date): Promise<number> {
    const [row] = await failuresOf(this.db('failed_logins'), key).where('created_at', '>', since).count<{ count: number }[]>({ count: '*' });
    return Number(row.count);
  }

  /**
   * When an IP or username at or over the limit is let in again: the moment the failure that
   * brings the count under the limit leaves the window. Null when it is not locked out.
   */
  async lockoutEnds(key: LockoutKey, since: Date, limit: number, windowMs: number): Promise<Date | null> {
    const rows: { created_at: Date }[] = await failuresOf(this.db('failed_logins'), key)
      .where('created_at', '>', since)
      .orderBy('created_at', 'desc')
      .offset(limit - 1)
      .limit(1)
      .select('created_at');
    return rows.length ? new Date(new Date(rows[0].created_at).getTime() + windowMs) : null;
  }

  /** Forgets one account's failures from an IP after it signs in there successfully. */
  async clearFailedLogins(ip: string, username: string): Promise<void> {
    await this.db('failed_logins').where('ip_address', ip).whereRaw('lower(username) = lower(?)', [username]).delete();
  }

  async setPassword(userId: string, passwordHash: string): Promise<void> {
    await this.db('users').where({ id: userId }).update({ password_hash: passwordHash, updated_at: this.db.fn.now() });
  }

  async organizationExists(orgId: string): Promise<boolean> {
    return (await this.db('organizations').where({ id: orgId }).first('id')) !== undefined;
  }
}

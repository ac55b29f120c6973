import type { ConnectionOptions } from 'node:tls';
import type { FastifyBaseLogger } from 'fastify';
import { Client, Filter, InvalidCredentialsError, NoSuchObjectError, ResultCodeError, SizeLimitExceededError } from 'ldapts';
import type { SettingsService } from '../platform/settings-service';
import { AppError, appError } from '../errors/app-error';
import type { AuthService, ClientInfo, TokenPair } from './auth-service';
import type { ExternalUsers } from './ldap-oidc-users';

export interface LdapConfig {
  url: string;
  bindDn: string;
  bindPassword: string | null;
  baseDn: string;
  userFilter: string;
  startTls: boolean;
  caPem: string;
  timeoutMs: number;
}

/** What POST /api/auth/ldap/test reports. */
export interface LdapTestReport {
  ok: boolean;
  message: string;
  url: string;
  bind_dn: string;
  base_dn: string;
  tls: 'ldaps' | 'starttls' | 'none';
  warnings: string[];
}

interface LdapIdentity {
  dn: string;
  username: string;
  email: string;
  displayName: string;
}

export async function readLdapConfig(settings: SettingsService): Promise<LdapConfig> {
  const get = <T>(key: string) => settings.get<T>(`ldap.${key}`);
  const [url, bindDn, bindPassword, baseDn, userFilter, startTls, caPem, timeoutSeconds] = await Promise.all([
    get<string>('url'),
    get<string>('bind_dn'),
    get<string | null>('bind_password'),
    get<string>('base_dn'),
    get<string>('user_filter'),
    get<boolean>('start_tls'),
    get<string>('ca_certificate'),
    get<number>('timeout_seconds'),
  ]);
  return { url: url.trim(), bindDn, bindPassword, baseDn: baseDn.trim(), userFilter, startTls, caPem, timeoutMs: timeoutSeconds * 1000 };
}

export function ldapEnabled(config: Pick<LdapConfig, 'url' | 'baseDn'>): boolean {
  return config.url !== '' && config.baseDn !== '';
}

function tlsMode(config: LdapConfig): LdapTestReport['tls'] {
  if (config.url.toLowerCase().startsWith('ldaps://')) return 'ldaps';
  return config.startTls ? 'starttls' : 'none';
}

/** The attribute a simple filter like (uid={username}) matches, to read the directory's spelling of the name. */
function usernameAttribute(filter: string): string | null {
  return /\(([A-Za-z][\w-]*)=\{username\}\)/.exec(filter)?.[1] ?? null;
}

function first(value: unknown): string {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'string' ? v : Buffer.isBuffer(v) ? v.toString('utf8') : '';
}

/** A person-readable reason for a failed LDAP exchange, and whether the server was reachable at all. */
export function describeLdapError(err: unknown, config: LdapConfig): AppError {
  if (err instanceof AppError) return err;
  const e = err as NodeJS.ErrnoException;
  const code = e.code ?? '';
  const seconds = config.timeoutMs / 1000;
  const at = `the LDAP server at ${config.url}`;
  if (code === 'ECONNREFUSED') return appError('LDAP_UNAVAILABLE', `Cannot reach ${at}: connection refused`);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return appError('LDAP_UNAVAILABLE', `Cannot reach ${at}: host name not found`);
  if (['EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(code))
    return appError('LDAP_UNAVAILABLE', `Cannot reach ${at}: ${code}`);
  if (/CERT|SELF_SIGNED|ERR_TLS|ERR_SSL|UNABLE_TO_VERIFY/.test(code)) {
    return appError(
      'LDAP_UNAVAILABLE',
      `TLS with ${at} failed: ${e.message} (${code}); set ldap.ca_certificate to the CA that signed the server's certificate`,
    );
  }
  if (e.message === 'Connection timeout') return appError('LDAP_UNAVAILABLE', `Cannot reach ${at}: no connection within ${seconds} s`);
  if (/Operation timed out/.test(e.message ?? '')) return appError('LDAP_UNAVAILABLE', `${at} did not answer within ${seconds} s`);
  if (/Connection closed|Socket error|Socket connection not established/.test(e.message ?? '')) {
    return appError(
      'LDAP_UNAVAILABLE',
      `${at} closed the connection (${(e.message ?? '').split('\n')[0]}); check that ldap.url uses the right scheme and port`,
    );
  }
  if (err instanceof ResultCodeError) return appError('LDAP_MISCONFIGURED', `${at} refused the request: ${err.message}`);
  return appError('LDAP_UNAVAILABLE', `LDAP request to ${config.url} failed: ${e.message ?? String(err)}`);
}

/**
 * LDAP sign-in by search-then-bind: the service account (or an anonymous bind) finds exactly one
 * entry with ldap.user_filter, then the user's password is checked by binding as that entry.
 * Wrong passwords and unknown users are ordinary failed logins (they count toward the lockout);
 * an unreachable or misconfigured server is a 503 that does not.
 */
export class LdapService {
  constructor(
    private readonly settings: SettingsService,
    private readonly auth: AuthService,
    private readonly users: ExternalUsers,
    private readonly log: FastifyBaseLogger,
  ) {}

  private tlsOptions(config: LdapConfig): ConnectionOptions {
    return { minVersion: 'TLSv1.2', ...(config.caPem.trim() ? { ca: [config.caPem] } : {}) };
  }

  /** A connected client, StartTLS done when configured, bound as the service account. */
  private async connect(config: LdapConfig): Promise<Client> {
    const client = new Client({
      url: config.url,
      timeout: config.timeoutMs,
      connectTimeout: config.timeoutMs,
      strictDN: false,
      ...(tlsMode(config) === 'ldaps' ? { tlsOptions: this.tlsOptions(config) } : {}),
    });
    try {
      if (tlsMode(config) === 'starttls') await client.startTLS(this.tlsOptions(config));
      if (config.bindDn) {
        try {
          await client.bind(config.bindDn, config.bindPassword ?? '');
        } catch (err) {
          if (err instanceof InvalidCredentialsError) {
            throw appError(
              'LDAP_MISCONFIGURED',
              `The LDAP service bind as '${config.bindDn}' was refused: invalid credentials; check ldap.bind_dn and ldap.bind_password`,
            );
          }
          throw err;
        }
      }
      return client;
    } catch (err) {
      await client.unbind().catch(() => undefined);
      throw describeLdapError(err, config);
    }
  }

  private async findAndBind(config: LdapConfig, username: string, password: string): Promise<LdapIdentity | null> {
    const client = await this.connect(config);
    try {
      const attribute = usernameAttribute(config.userFilter);
      const filter = config.userFilter.replaceAll('{username}', Filter.escape(username));
      let entries;
      try {
        ({ searchEntries: entries } = await client.search(config.baseDn, {
          scope: 'sub',
          filter,
          sizeLimit: 2,
          attributes: ['cn', 'displayName', 'mail', ...(attribute ? [attribute] : [])],
        }));
      } catch (err) {
        if (err instanceof SizeLimitExceededError) entries = [{}, {}];
        else if (err instanceof NoSuchObjectError)
          throw appError('LDAP_MISCONFIGURED', `The LDAP base DN '${config.baseDn}' does not exist; check ldap.base_dn`);
        else throw err;
      }
      if (entries.length !== 1) {
        if (entries.length > 1)
          this.log.warn({ username, filter: config.userFilter }, 'LDAP user filter matched more than one entry; sign-in refused');
        return null;
      }
      const entry = entries[0] as Record<string, unknown> & { dn: string };
      try {
        await client.bind(entry.dn, password);
      } catch (err) {
        if (err instanceof InvalidCredentialsError) return null;
        throw err;
      }
      const spelled = attribute ? first(entry[attribute]) : '';
      return {
        dn: entry.dn,
        username: spelled.toLowerCase() === username.toLowerCase() ? spelled : username,
        email: first(entry.mail),
        displayName: first(entry.displayName) || first(entry.cn),
      };
    } catch (err) {
      throw describeLdapError(err, config);
    } finally {
      await client.unbind().catch(() => undefined);
    }
  }

  /** POST /api/auth/ldap: the same token pair as /login. */
  async login(username: string, password: string, clientType: string, client: ClientInfo): Promise<TokenPair> {
    const config = await readLdapConfig(this.settings);
    if (!ldapEnabled(config))
      throw appError('LDAP_NOT_CONFIGURED', 'LDAP sign-in is not enabled on this service: a platform administrator sets ldap.url and ldap.base_dn');
    const name = username.trim();
    const identity = await this.auth.asGuess(client, name || username, async () => {
      // An empty password would be an unauthenticated bind, which LDAP servers answer with success.
      const found = name && password ? await this.findAndBind(config, name, password) : null;
      return found ?? this.auth.failLogin(client, name || username);
    });
    const user = await this.users.resolve(
      { provider: 'ldap', username: identity.username, externalId: identity.dn, email: identity.email, displayName: identity.displayName },
      client.ip,
    );
    if (!user.is_active) return this.auth.failLogin(client, identity.username);
    return this.auth.startSession(user, clientType, client);
  }

  /** POST /api/auth/ldap/test: does the service bind work, can it read the base DN, and if not, why. */
  async test(): Promise<LdapTestReport> {
    const config = await readLdapConfig(this.settings);
    const tls = tlsMode(config);
    const report = { url: config.url, bind_dn: config.bindDn, base_dn: config.baseDn, tls, warnings: [] as string[] };
    if (tls === 'none' && config.url) report.warnings.push('Passwords go to the LDAP server unencrypted: use ldaps:// or turn on ldap.start_tls');
    if (!config.bindDn) report.warnings.push('No ldap.bind_dn: users are searched with an anonymous bind');
    if (!ldapEnabled(config)) return { ok: false, message: 'LDAP is not configured: set ldap.url and ldap.base_dn', ...report };
    try {
      const client = await this.connect(config);
      try {
        await client.search(config.baseDn, { scope: 'base', filter: '(objectClass=*)', attributes: ['1.1'] });
      } catch (err) {
        if (err instanceof NoSuchObjectError)
          throw appError('LDAP_MISCONFIGURED', `The base DN '${config.baseDn}' does not exist or is not visible to the service account`);
        throw describeLdapError(err, config);
      } finally {
        await client.unbind().catch(() => undefined);
      }
    } catch (err) {
      return { ok: false, message: describeLdapError(err, config).message, ...report };
    }
    const who = config.bindDn ? `as '${config.bindDn}'` : 'anonymously';
    return { ok: true, message: `Bound ${who} to ${config.url} and read the base DN '${config.baseDn}'`, ...report };
  }
}

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { SETTING_DEFINITIONS } from '../platform/settings-definitions';
import { ConfigError } from '../config';

type Parse = (raw: string, name: string) => unknown;

const text: Parse = (raw) => raw.trim();
const secret: Parse = (raw) => raw;
const list: Parse = (raw) =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
const bool: Parse = (raw, name) => {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be 1 or 0 (true or false), got "${raw}"`);
};
const int: Parse = (raw, name) => {
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  return Number(raw.trim());
};
const pemFile: Parse = (raw, name) => {
  const path = resolve(raw);
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${name} names a file that cannot be read: ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
};

/** Environment variables that seed the enterprise sign-in settings, and how each is read. */
export const ENTERPRISE_ENV: [env: string, setting: string, parse: Parse, expected?: string][] = [
  ['SWITCHBOARD_LDAP_URL', 'ldap.url', text, 'an ldap:// or ldaps:// URL'],
  ['SWITCHBOARD_LDAP_BIND_DN', 'ldap.bind_dn', text],
  ['SWITCHBOARD_LDAP_BIND_PASSWORD', 'ldap.bind_password', secret],
  ['SWITCHBOARD_LDAP_BASE_DN', 'ldap.base_dn', text],
  ['SWITCHBOARD_LDAP_USER_FILTER', 'ldap.user_filter', text, 'a filter in parentheses containing {username}, e.g. (uid={username})'],
  ['SWITCHBOARD_LDAP_START_TLS', 'ldap.start_tls', bool],
  ['SWITCHBOARD_LDAP_CA_FILE', 'ldap.ca_certificate', pemFile],
  ['SWITCHBOARD_LDAP_TIMEOUT_SECONDS', 'ldap.timeout_seconds', int, 'a number of seconds from 1 to 120'],
  ['SWITCHBOARD_OIDC_ISSUER', 'oidc.issuer', text, 'an https:// URL'],
  ['SWITCHBOARD_OIDC_CLIENT_ID', 'oidc.client_id', text],
  ['SWITCHBOARD_OIDC_CLIENT_SECRET', 'oidc.client_secret', secret],
  ['SWITCHBOARD_OIDC_REDIRECT_URIS', 'oidc.redirect_uris', list, 'comma-separated http(s) URLs without a #fragment'],
  ['SWITCHBOARD_OIDC_SCOPES', 'oidc.scopes', text, 'space-separated scopes including openid'],
  ['SWITCHBOARD_OIDC_USERNAME_CLAIM', 'oidc.username_claim', text],
];

/**
 * Settings values from SWITCHBOARD_LDAP_* and SWITCHBOARD_OIDC_*, checked against the settings'
 * schemas; a bad value stops the start with one line naming the variable.
 */
export function enterpriseSettingsFromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, key, parse, expected] of ENTERPRISE_ENV) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const value = parse(raw, name);
    const definition = SETTING_DEFINITIONS[key];
    if (!definition.secret && !Value.Check(definition.schema, value)) {
      const problem = expected ? `must be ${expected}` : ([...Value.Errors(definition.schema, value)][0]?.message ?? 'invalid value');
      throw new ConfigError(`${name} (setting ${key}) ${expected ? problem : `is not valid: ${problem}`}, got "${raw}"`);
    }
    values[key] = value;
  }
  return values;
}

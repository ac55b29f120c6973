import { Type, type TSchema } from '@sinclair/typebox';

/**
 * Every runtime setting: its scope, schema and default. 'global' settings apply to the
 * whole platform and need platform.admin to change; 'org' settings belong to the active
 * organization. Secret settings are encrypted at rest and read back only as `has_<key>`.
 */
export interface SettingDefinition {
  scope: 'global' | 'org';
  schema: TSchema;
  default: unknown;
  description: string;
  secret?: boolean;
  /** An id of this table that must be a row of the organization the setting is written for. */
  references?: { table: string; what: string };
}

const hours = Type.Integer({ minimum: 1, maximum: 8760 });

export const SETTING_DEFINITIONS: Record<string, SettingDefinition> = {
  'session.access_token_hours': { scope: 'global', schema: hours, default: 24, description: 'Access token lifetime in hours.' },
  'session.refresh_token_days': {
    scope: 'global',
    schema: Type.Integer({ minimum: 1, maximum: 365 }),
    default: 30,
    description: 'Refresh token lifetime in days.',
  },
  'security.rate_limit.requests_per_minute': {
    scope: 'global',
    schema: Type.Integer({ minimum: 1, maximum: 100000 }),
    default: 100,
    description: 'Requests per minute to /api/auth/* from one client IP (applies after restart).',
  },
  'security.rate_limit.failed_login_limit': {
    scope: 'global',
    schema: Type.Integer({ minimum: 1, maximum: 1000 }),
    default: 5,
    description: 'Failed logins allowed from one IP within the window.',
  },
  'security.rate_limit.failed_login_window_minutes': {
    scope: 'global',
    schema: Type.Integer({ minimum: 1, maximum: 1440 }),
    default: 15,
    description: 'Length of the failed-login window in minutes.',
  },
  'ssh.certificate_max_hours': {
    scope: 'global',
    schema: Type.Integer({ minimum: 1, maximum: 24 }),
    default: 8,
    description: 'Longest validity of an SSH user certificate from /login (it never outlives the access token either); 1 to 24 hours.',
  },
  'licenses.terminal_seats': {
    scope: 'global',
    schema: Type.Integer({ minimum: 0, maximum: 100000 }),
    default: 5,
    description: 'Concurrent terminal (client_type terminal) sessions allowed; each user holds at most one (a new terminal login replaces the last).',
  },
  // Platform-wide, not per organization: an organization's own administrators must not raise their share.
  'licenses.terminal_seats_per_org': {
    scope: 'global',
    schema: Type.Union([Type.Integer({ minimum: 0, maximum: 100000 }), Type.Null()]),
    default: null,
    description:
      'Most of licenses.terminal_seats the users of any one organization may hold at once, so that one organization cannot take every seat; ' +
      'null: no share, any organization may take any free seat.',
  },
  // A pattern, not format 'uuid': settings are checked with TypeBox's Value.Check, which knows no formats.
  'devices.default_profile_id': {
    scope: 'org',
    schema: Type.Union([Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' }), Type.Null()]),
    default: null,
    references: { table: 'connection_profiles', what: 'connection profile' },
    description: 'Connection profile used by imports when none is given.',
  },
  // Enterprise sign-in (controller/src/auth/ldap*, oidc*): seeded from SWITCHBOARD_LDAP_* / SWITCHBOARD_OIDC_* on start.
  'ldap.url': {
    scope: 'global',
    schema: Type.String({ pattern: '^(ldaps?://\\S+)?$', maxLength: 1024 }),
    default: '',
    description: 'LDAP server, ldap://host:389 or ldaps://host:636; empty turns LDAP sign-in off.',
  },
  'ldap.bind_dn': {
    scope: 'global',
    schema: Type.String({ maxLength: 1024 }),
    default: '',
    description: 'DN of the service account that searches for users; empty searches anonymously.',
  },
  'ldap.bind_password': {
    scope: 'global',
    schema: Type.String({ maxLength: 1024 }),
    default: null,
    secret: true,
    description: 'Password of the service account (write-only).',
  },
  'ldap.base_dn': {
    scope: 'global',
    schema: Type.String({ maxLength: 1024 }),
    default: '',
    description: 'Subtree searched for users, e.g. ou=people,dc=example,dc=com.',
  },
  'ldap.user_filter': {
    scope: 'global',
    schema: Type.String({ pattern: '^\\(.*\\{username\\}.*\\)$', maxLength: 1024 }),
    default: '(uid={username})',
    description: 'Search filter for a user; {username} is replaced by the escaped sign-in name. Active Directory: (sAMAccountName={username}).',
  },
  'ldap.start_tls': {
    scope: 'global',
    schema: Type.Boolean(),
    default: false,
    description: 'Upgrade ldap:// connections with StartTLS before binding.',
  },
  'ldap.ca_certificate': {
    scope: 'global',
    schema: Type.String({ maxLength: 65536 }),
    default: '',
    description: 'PEM CA certificate(s) trusted for ldaps:// and StartTLS; empty uses the system CAs.',
  },
  'ldap.timeout_seconds': {
    scope: 'global',
    schema: Type.Integer({ minimum: 1, maximum: 120 }),
    default: 10,
    description: 'Connect and per-operation time limit for the LDAP server.',
  },
  'oidc.issuer': {
    scope: 'global',
    schema: Type.String({ pattern: '^(https?://\\S+)?$', maxLength: 1024 }),
    default: '',
    description: 'OpenID provider issuer URL (discovery at /.well-known/openid-configuration); empty turns OIDC sign-in off.',
  },
  'oidc.client_id': {
    scope: 'global',
    schema: Type.String({ maxLength: 1024 }),
    default: '',
    description: 'Client id registered at the provider, with redirect URI <SWITCHBOARD_PUBLIC_URL>/api/auth/oidc/callback.',
  },
  'oidc.client_secret': {
    scope: 'global',
    schema: Type.String({ maxLength: 4096 }),
    default: null,
    secret: true,
    description: 'Client secret (write-only); unset for a public client (PKCE only).',
  },
  'oidc.redirect_uris': {
    scope: 'global',
    schema: Type.Array(Type.String({ pattern: '^https?://[^#\\s]+$', maxLength: 2048 }), { maxItems: 100 }),
    default: [],
    description: 'Allow-list for the redirect_uri of /api/auth/oidc/authorize (exact match).',
  },
  'oidc.scopes': {
    scope: 'global',
    schema: Type.String({ pattern: '(^|\\s)openid(\\s|$)', maxLength: 1024 }),
    default: 'openid profile email',
    description: 'Scopes requested from the provider; must include openid.',
  },
  'oidc.username_claim': {
    scope: 'global',
    schema: Type.String({ minLength: 1, maxLength: 256 }),
    default: 'preferred_username',
    description: 'ID token or userinfo claim used as the username (falls back to email, then sub).',
  },
  'discovery.default_poll_interval_minutes': {
    scope: 'org',
    schema: Type.Integer({ minimum: 1, maximum: 10080 }),
    default: 60,
    description: 'Poll interval for devices with poll_enabled and no interval of their own.',
  },
  'discovery.poll_history_days': {
    scope: 'global',
    schema: Type.Integer({ minimum: 1, maximum: 3650 }),
    default: 30,
    description: "Finished polls older than this are forgotten, except each device's latest and those whose records are still the latest shown.",
  },
  // NetBox sources (controller/src/netbox/destination.ts): global, so only a platform administrator opens the controller's network to them.
  'netbox.allowed_hosts': {
    scope: 'global',
    schema: Type.Array(
      Type.String({
        pattern:
          '^(\\[[0-9a-fA-F:.]+(/[0-9]{1,3})?\\](:[0-9]{1,5})?|[0-9a-fA-F:.]+(/[0-9]{1,3})?|(\\*\\.)?[A-Za-z0-9.-]+(/[0-9]{1,2})?(:[0-9]{1,5})?)$',
        maxLength: 300,
      }),
      { maxItems: 500 },
    ),
    default: [],
    description:
      'Hosts NetBox sources may connect to: names (netbox.example.com, *.example.com), addresses or CIDRs (10.0.0.0/8, [fd00::/8]), each ' +
      "with an optional :port. Empty: any host but loopback, link-local and the controller's own port. Loopback and link-local need an " +
      "address or CIDR entry; the controller's own port an entry naming it.",
  },
  // Agents (controller/src/agents, controller/src/jobs).
  'agents.heartbeat_seconds': {
    scope: 'global',
    schema: Type.Integer({ minimum: 1, maximum: 3600 }),
    default: 10,
    description: 'How often agents send a heartbeat (told to agents in each heartbeat reply).',
  },
  'agents.offline_after_seconds': {
    scope: 'global',
    schema: Type.Integer({ minimum: 2, maximum: 86400 }),
    default: 30,
    description: 'An agent with no heartbeat for this long is offline; after two missed beats it is degraded.',
  },
  'agents.enrollment_token_minutes': {
    scope: 'org',
    schema: Type.Integer({ minimum: 1, maximum: 10080 }),
    default: 60,
    description: 'Lifetime of the one-time enrollment token returned by POST /api/agents.',
  },
};

export type SettingKey = keyof typeof SETTING_DEFINITIONS;

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
}

const hours = Type.Integer({ minimum: 1, maximum: 8760 });

export const SETTING_DEFINITIONS: Record<string, SettingDefinition> = {
  'session.access_token_hours': { scope: 'global', schema: hours, default: 24, description: 'Access token lifetime in hours.' },
  'session.refresh_token_days': { scope: 'global', schema: Type.Integer({ minimum: 1, maximum: 365 }), default: 30, description: 'Refresh token lifetime in days.' },
  'security.rate_limit.requests_per_minute': { scope: 'global', schema: Type.Integer({ minimum: 1, maximum: 100000 }), default: 100, description: 'Requests per minute to /api/auth/* from one client IP (applies after restart).' },
  'security.rate_limit.failed_login_limit': { scope: 'global', schema: Type.Integer({ minimum: 1, maximum: 1000 }), default: 5, description: 'Failed logins allowed from one IP within the window.' },
  'security.rate_limit.failed_login_window_minutes': { scope: 'global', schema: Type.Integer({ minimum: 1, maximum: 1440 }), default: 15, description: 'Length of the failed-login window in minutes.' },
  'licenses.terminal_seats': { scope: 'global', schema: Type.Integer({ minimum: 0, maximum: 100000 }), default: 5, description: 'Concurrent terminal (client_type terminal) sessions allowed.' },
  'devices.default_profile_id': { scope: 'org', schema: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]), default: null, description: 'Connection profile used by imports when none is given.' },
  'discovery.default_poll_interval_minutes': { scope: 'org', schema: Type.Integer({ minimum: 1, maximum: 10080 }), default: 60, description: 'Poll interval for devices with poll_enabled and no interval of their own.' },
};

export type SettingKey = keyof typeof SETTING_DEFINITIONS;

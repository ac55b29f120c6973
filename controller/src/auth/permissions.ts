import { own } from '../../../shared/src/own';

/** Permissions named by the API, and the built-in roles that bundle them. */
export const PERMISSIONS = [
  'devices.access',
  /** Read stored configs with the device's own secrets unmasked (?reveal=true, audited). */
  'configs.secrets',
  'agents.manage',
  'users.manage',
  'settings.manage',
  'audit.read',
  'platform.admin',
  // An SSH user certificate from /login (public_key): people who work on devices, not auditors.
  'ssh.certificate',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export const ROLES: Record<string, { description: string; permissions: Permission[] }> = {
  platform_admin: { description: 'Everything, in every organization', permissions: [...PERMISSIONS] },
  org_admin: {
    description: 'Runs one organization: inventory, agents, users, settings, audit',
    permissions: ['devices.access', 'configs.secrets', 'agents.manage', 'users.manage', 'settings.manage', 'audit.read', 'ssh.certificate'],
  },
  operator: { description: 'Inventory, backups, templates and deployments; SSH certificates', permissions: ['devices.access', 'ssh.certificate'] },
  auditor: { description: 'Reads the audit log', permissions: ['audit.read'] },
};

export function permissionsFor(roles: string[], isPlatformAdmin: boolean): Permission[] {
  if (isPlatformAdmin) return [...PERMISSIONS];
  const granted = new Set<Permission>();
  for (const role of roles) for (const permission of own(ROLES, role)?.permissions ?? []) granted.add(permission);
  return PERMISSIONS.filter((p) => granted.has(p));
}

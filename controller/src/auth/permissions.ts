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
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export const ROLES: Record<string, { description: string; permissions: Permission[] }> = {
  platform_admin: { description: 'Everything, in every organization', permissions: [...PERMISSIONS] },
  org_admin: {
    description: 'Runs one organization: inventory, agents, users, settings, audit',
    permissions: ['devices.access', 'configs.secrets', 'agents.manage', 'users.manage', 'settings.manage', 'audit.read'],
  },
  operator: { description: 'Inventory, backups, templates and deployments', permissions: ['devices.access'] },
  auditor: { description: 'Reads the audit log', permissions: ['audit.read'] },
};

export function permissionsFor(roles: string[], isPlatformAdmin: boolean): Permission[] {
  if (isPlatformAdmin) return [...PERMISSIONS];
  const granted = new Set<Permission>();
  for (const role of roles) for (const permission of ROLES[role]?.permissions ?? []) granted.add(permission);
  return PERMISSIONS.filter((p) => granted.has(p));
}

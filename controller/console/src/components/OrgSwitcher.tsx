import { NativeSelect } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { replaceAccessToken } from '../auth/session';
import { useMe } from '../lib/me';

/** Platform administrators act in another organization with a switched access token. */
export function OrgSwitcher() {
  const me = useMe();
  const client = useQueryClient();
  const isAdmin = me.data?.is_platform_admin ?? false;
  const orgs = useQuery({
    queryKey: ['organizations'],
    queryFn: () => unwrap(api.GET('/api/admin/organizations')),
    enabled: isAdmin,
  });
  if (!isAdmin || !orgs.data) return null;
  const change = async (orgId: string) => {
    if (!orgId || orgId === me.data?.org_id) return;
    try {
      const result = await unwrap(api.POST('/api/auth/switch-org', { body: { org_id: orgId } }));
      replaceAccessToken(result.access_token);
      await client.resetQueries();
    } catch (err) {
      notifications.show({ color: 'red', title: 'Could not switch organization', message: (err as Error).message });
    }
  };
  return (
    // A native select: the header is on every page, and Mantine's Select measures its dropdown's position as it renders.
    <NativeSelect
      aria-label="Organization"
      size="xs"
      w={180}
      visibleFrom="xs"
      value={me.data?.org_id ?? ''}
      data={orgs.data.organizations.map((o) => ({ value: o.id, label: o.name }))}
      onChange={(e) => void change(e.currentTarget.value)}
    />
  );
}

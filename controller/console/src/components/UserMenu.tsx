import { Button, Menu } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import { clearSession } from '../auth/session';
import { useMe } from '../lib/me';

/** The user's name; sign-out revokes the refresh tokens (POST /api/auth/logout) before forgetting them. */
export function UserMenu() {
  const me = useMe();
  const client = useQueryClient();
  const signOut = async () => {
    await api.POST('/api/auth/logout').catch(() => undefined);
    clearSession();
    client.clear();
  };
  return (
    <Menu position="bottom-end">
      <Menu.Target>
        <Button variant="subtle" size="xs">
          {me.data?.display_name || me.data?.username || 'Account'}
        </Button>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Label>{me.data?.auth_provider === 'local' ? 'Local account' : me.data?.auth_provider}</Menu.Label>
        <Menu.Item onClick={() => void signOut()}>Sign out</Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}

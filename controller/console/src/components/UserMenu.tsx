import { Button } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api/client';
import { clearSession } from '../auth/session';
import { loadLateParts, useLateParts } from '../lib/late';
import { useMe } from '../lib/me';

/**
 * The user's name; its menu signs out, revoking the refresh tokens (POST /api/auth/logout) before
 * forgetting them. The menu's code comes with the shell's late parts (lib/late.ts): until then the
 * same button stands in, and a click on it opens the menu as soon as it is there.
 */
export function UserMenu() {
  const me = useMe();
  const client = useQueryClient();
  const late = useLateParts();
  const [clicked, setClicked] = useState(false);
  const label = me.data?.display_name || me.data?.username || 'Account';
  const signOut = async () => {
    await api.POST('/api/auth/logout').catch(() => undefined);
    clearSession();
    client.clear();
  };
  if (late) {
    const provider = me.data?.auth_provider === 'local' ? 'Local account' : (me.data?.auth_provider ?? '');
    return <late.AccountMenu label={label} provider={provider} opened={clicked} onSignOut={() => void signOut()} />;
  }
  const load = () => void loadLateParts();
  return (
    <Button
      variant="subtle"
      size="xs"
      onMouseEnter={load}
      onFocus={load}
      onClick={() => {
        setClicked(true);
        load();
      }}
    >
      {label}
    </Button>
  );
}

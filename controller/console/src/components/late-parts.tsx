import '@mantine/notifications/styles.css';
import { Button, Menu } from '@mantine/core';
import { ModalsProvider } from '@mantine/modals';
import { Notifications } from '@mantine/notifications';
import { useEffect } from 'react';

let overlaysMounted: () => void;
/** Resolves once the dialog layer listens: `modals.open…` before that would be lost. */
export const overlaysReady = new Promise<void>((resolve) => (overlaysMounted = resolve));

/** The notification and dialog layers (see lib/late.ts); notifications shown before they mount wait in their store. */
export function Overlays() {
  // A parent's effects run after its children's: the provider's listeners are in place by now.
  useEffect(() => overlaysMounted(), []);
  return (
    <>
      <Notifications position="top-right" />
      <ModalsProvider />
    </>
  );
}

/** The account button's menu: who is signed in, and sign-out. */
export function AccountMenu({ label, provider, opened, onSignOut }: { label: string; provider: string; opened: boolean; onSignOut: () => void }) {
  return (
    <Menu position="bottom-end" defaultOpened={opened}>
      <Menu.Target>
        <Button variant="subtle" size="xs">
          {label}
        </Button>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Label>{provider}</Menu.Label>
        <Menu.Item onClick={onSignOut}>Sign out</Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}

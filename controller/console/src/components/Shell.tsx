import { AppShell, Burger, Group, NavLink, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link, useLocation } from 'wouter';
import { preloadRoute } from '../lib/pages';
import { OrgSwitcher } from './OrgSwitcher';
import { UserMenu } from './UserMenu';

const NAV: { href: string; label: string }[] = [
  { href: '/', label: 'Sites' },
  { href: '/agents', label: 'Agents' },
  { href: '/devices', label: 'Devices' },
  { href: '/snapshots', label: 'Snapshots' },
  { href: '/topology', label: 'Topology' },
  { href: '/templates', label: 'Templates' },
  { href: '/stacks', label: 'Stacks' },
  { href: '/deployments', label: 'Deployments' },
  { href: '/instances', label: 'Instances' },
  { href: '/tasks', label: 'Scheduled tasks' },
  { href: '/profiles', label: 'Profiles' },
  { href: '/admin', label: 'Admin' },
];

function active(location: string, href: string): boolean {
  return href === '/' ? location === '/' : location === href || location.startsWith(`${href}/`);
}

/** Header (organization switcher, user menu) and navigation around every signed-in page. */
export function Shell({ children }: { children: ReactNode }) {
  const [opened, { toggle, close }] = useDisclosure();
  const [location] = useLocation();
  const client = useQueryClient();
  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 210, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
            <Title order={2} size="h4">
              Switchboard
            </Title>
          </Group>
          <Group gap="sm" wrap="nowrap">
            <OrgSwitcher />
            <UserMenu />
          </Group>
        </Group>
      </AppShell.Header>
      {/* The navbar scrolls natively when short: Mantine's ScrollArea measures the page (a forced layout) as it first renders. */}
      <AppShell.Navbar p="xs" aria-label="Main" style={{ overflowY: 'auto' }}>
        {NAV.map((item) => (
          <NavLink
            key={item.href}
            component={Link}
            href={item.href}
            // The active link's text in the theme's text shade (darker than Mantine's in light, see theme.ts), for AA contrast on its tint.
            label={
              <Text size="sm" c={active(location, item.href) ? 'indigo' : undefined}>
                {item.label}
              </Text>
            }
            active={active(location, item.href)}
            aria-current={active(location, item.href) ? 'page' : undefined}
            onClick={close}
            // Pointing at a link starts its page's code and data.
            onMouseEnter={() => preloadRoute(client, item.href)}
            onFocus={() => preloadRoute(client, item.href)}
          />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>{children}</AppShell.Main>
    </AppShell>
  );
}

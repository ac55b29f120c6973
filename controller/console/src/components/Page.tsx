import { Alert, Group, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** A page: its title, optional actions on the right, and the content. */
export function Page({ title, actions, children }: { title: string; actions?: ReactNode; children: ReactNode }) {
  return (
    <Stack gap="md">
      <Group justify="space-between" wrap="wrap">
        <Title order={1} size="h2">
          {title}
        </Title>
        {actions && <Group gap="xs">{actions}</Group>}
      </Group>
      {children}
    </Stack>
  );
}

/** What went wrong and what to try, from the API's own message. */
export function ErrorNote({ error, action }: { error: unknown; action?: string }) {
  if (!error) return null;
  // A 403 is not an outage: the caller's roles do not allow it (a new LDAP or OIDC user has none yet).
  if ((error as { status?: number }).status === 403) {
    return (
      <Alert color="yellow" title="Not allowed" role="alert">
        {(error as Error).message}
        <Text size="sm" mt={4}>
          Your account's roles do not allow this page. Ask an administrator to give you a role (Admin → Users).
        </Text>
      </Alert>
    );
  }
  return (
    <Alert color="red" title="Something went wrong" role="alert">
      {(error as Error).message ?? String(error)}
      {action && (
        <Text size="sm" mt={4}>
          {action}
        </Text>
      )}
    </Alert>
  );
}

/** An empty list says what to do next. */
export function Empty({ children }: { children: ReactNode }) {
  return (
    <Text c="dimmed" py="lg" ta="center">
      {children}
    </Text>
  );
}

import { Alert, Button, Center, Divider, Paper, PasswordInput, SegmentedControl, Stack, TextInput, Title } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { expectFragmentTokens, storeTokens } from '../auth/session';

type Method = 'local' | 'ldap';

/** Local and LDAP password sign-in, plus the OIDC button when an identity provider is configured. */
export function SignIn() {
  const providers = useQuery({
    queryKey: ['providers'],
    queryFn: () => unwrap(api.GET('/api/auth/providers')),
  });
  const enabled = new Set((providers.data?.providers ?? []).filter((p) => p.enabled).map((p) => p.name));
  const [method, setMethod] = useState<Method>('local');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useForm({
    initialValues: { username: '', password: '' },
    validate: {
      username: (v) => (v.trim() ? null : 'Enter your username'),
      password: (v) => (v ? null : 'Enter your password'),
    },
  });

  const submit = form.onSubmit(async (values) => {
    setBusy(true);
    setError(null);
    try {
      const path = method === 'ldap' ? '/api/auth/ldap' : '/api/auth/login';
      storeTokens(await unwrap(api.POST(path, { body: { username: values.username.trim(), password: values.password } })));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  });

  const oidc = () => {
    const redirect = `${window.location.origin}/`;
    // The callback's tokens come back in the fragment: only this tab, having asked, takes them.
    expectFragmentTokens();
    window.location.assign(`/api/auth/oidc/authorize?redirect_uri=${encodeURIComponent(redirect)}`);
  };

  return (
    <Center mih="100vh" p="md" component="main">
      <Paper withBorder shadow="sm" p="xl" w={380} maw="100%">
        <form onSubmit={submit} noValidate>
          <Stack>
            <Title order={1} size="h2">
              Switchboard
            </Title>
            {enabled.has('ldap') && (
              <SegmentedControl
                aria-label="Account type"
                value={method}
                onChange={(v) => setMethod(v as Method)}
                data={[
                  { label: 'Local account', value: 'local' },
                  { label: 'LDAP', value: 'ldap' },
                ]}
              />
            )}
            {error && (
              <Alert color="red" title="Sign-in failed" role="alert">
                {error}
              </Alert>
            )}
            <TextInput label="Username" autoComplete="username" autoFocus {...form.getInputProps('username')} />
            <PasswordInput label="Password" autoComplete="current-password" {...form.getInputProps('password')} />
            <Button type="submit" loading={busy}>
              Sign in
            </Button>
            {enabled.has('oidc') && (
              <>
                <Divider label="or" labelPosition="center" />
                <Button variant="default" onClick={oidc}>
                  Sign in with single sign-on
                </Button>
              </>
            )}
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}

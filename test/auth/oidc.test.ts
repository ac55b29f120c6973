import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../controller/src/app';
import { enterpriseSettingsFromEnv } from '../../controller/src/auth/ldap-oidc-env';
import { createLogger } from '../../controller/src/logger';
import { startTestController, type TestController } from '../helpers/controller';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider';
import { freePort } from '../helpers/slapd';

const APP_URI = 'https://console.example.test/signed-in';
const ACCOUNTS = {
  'sub-olivia': { preferred_username: 'olivia', email: 'olivia@example.test', name: 'Olivia Oidc' },
  'sub-peter': { preferred_username: 'peter', email: 'peter@example.test', name: 'Peter Two' },
  // Same username as a local account the test creates: must not take it over.
  'sub-lena': { preferred_username: 'lena', email: 'lena@example.test' },
  // No preferred_username: the e-mail becomes the username.
  'sub-quinn': { email: 'quinn@example.test' },
  // A system account's name: never provisioned (it would be an SSH certificate's principal).
  'sub-root': { preferred_username: 'Root', email: 'root@example.test' },
};

let c: TestController;
let idp: TestOidcProvider;

async function configure(values: Record<string, unknown>): Promise<void> {
  const res = await c.request('PUT', '/api/admin/settings', { token: c.adminToken, body: { settings: values } });
  expect(res.status, res.text).toBe(200);
}

const oidcSettings = () => ({
  'oidc.issuer': idp.issuer,
  'oidc.client_id': idp.clientId,
  'oidc.client_secret': idp.clientSecret,
  'oidc.redirect_uris': [APP_URI, 'http://127.0.0.1:9/other'],
});

/** The test browser's cookie for the OIDC routes: set by /oidc/authorize, sent to the callback. */
let browserCookie: string | undefined;

/** GET /oidc/authorize; returns the provider URL it redirects to and keeps its state cookie. */
async function authorize(redirectUri = APP_URI, base?: string): Promise<string> {
  const res = await fetch(`${base ?? c.url}/api/auth/oidc/authorize?redirect_uri=${encodeURIComponent(redirectUri)}`, { redirect: 'manual' });
  expect(res.status, await res.clone().text()).toBe(302);
  expect(res.headers.get('cache-control')).toBe('no-store');
  browserCookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
  return res.headers.get('location') as string;
}

/** Calls the controller's callback as the browser would (with its cookie); returns status, Location and body. */
async function callback(url: string, cookie = browserCookie): Promise<{ status: number; location: string | null; body: any; headers: Headers }> {
  const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  const text = await res.text();
  return { status: res.status, location: res.headers.get('location'), body: text ? JSON.parse(text) : null, headers: res.headers };
}

function fragment(location: string): Record<string, string> {
  const url = new URL(location);
  return Object.fromEntries(new URLSearchParams(url.hash.slice(1)));
}

function withParam(url: string, name: string, value: string): string {
  const u = new URL(url);
  u.searchParams.set(name, value);
  return u.href;
}

beforeAll(async () => {
  c = await startTestController({ settings: { 'security.rate_limit.requests_per_minute': 100000, 'security.rate_limit.failed_login_limit': 1000 } });
  idp = await startOidcProvider({ callbackUrl: `${c.url}/api/auth/oidc/callback`, accounts: ACCOUNTS });
});
afterAll(async () => {
  await c?.close();
  await idp?.close();
});

describe('OIDC not configured', () => {
  it('lists oidc as disabled and answers 400 on /oidc/authorize', async () => {
    const providers = await c.request('GET', '/api/auth/providers');
    expect(providers.body.providers).toContainEqual({ name: 'oidc', enabled: false });
    const res = await c.request('GET', `/api/auth/oidc/authorize?redirect_uri=${encodeURIComponent(APP_URI)}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('OIDC_NOT_CONFIGURED');
    expect(res.body.error).toContain('oidc.issuer');
  });
});

describe('authorization code flow with PKCE against oidc-provider', () => {
  beforeAll(async () => configure(oidcSettings()));

  it('shows oidc enabled in /providers and keeps the client secret write-only', async () => {
    const providers = await c.request('GET', '/api/auth/providers');
    expect(providers.body.providers).toEqual([
      { name: 'local', enabled: true },
      { name: 'ldap', enabled: false },
      { name: 'oidc', enabled: true },
    ]);
    const settings = await c.request('GET', '/api/admin/settings', { token: c.adminToken });
    expect(settings.body.settings['has_oidc.client_secret']).toBe(true);
    expect(settings.text).not.toContain(idp.clientSecret);
  });

  it('/oidc/authorize redirects to the provider with S256 PKCE, state and nonce, keeping the request in the database', async () => {
    const location = new URL(await authorize());
    expect(location.origin).toBe(idp.issuer);
    const q = location.searchParams;
    expect(q.get('client_id')).toBe(idp.clientId);
    expect(q.get('redirect_uri')).toBe(`${c.url}/api/auth/oidc/callback`);
    expect(q.get('response_type')).toBe('code');
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(q.get('state')).toBeTruthy();
    expect(q.get('nonce')).toBeTruthy();
    expect(q.get('scope')).toBe('openid profile email');
    const rows = await c.db('oidc_auth_requests').select();
    const row = rows.find((r) => r.redirect_uri === APP_URI);
    expect(row).toBeDefined();
    // Only a hash of the state is stored.
    expect(rows.some((r) => r.state_hash === q.get('state'))).toBe(false);
    expect(new Date(row.expires_at).getTime()).toBeGreaterThan(Date.now());
  });

  it('signs in: redirects to redirect_uri with the token pair in the fragment; the new user has no roles', async () => {
    const back = await idp.signIn(await authorize(), 'sub-olivia');
    expect(back.startsWith(`${c.url}/api/auth/oidc/callback?`)).toBe(true);
    const res = await callback(back);
    expect(res.status, JSON.stringify(res.body)).toBe(302);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.location?.startsWith(`${APP_URI}#`)).toBe(true);
    const tokens = fragment(res.location as string);
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: '86400' });
    expect(tokens.refresh_token).toHaveLength(64);

    const me = await c.request('GET', '/api/auth/me', { token: tokens.access_token });
    const defaultOrg = await c.db('organizations').where({ is_default: true }).first('id');
    expect(me.body).toMatchObject({
      username: 'olivia',
      email: 'olivia@example.test',
      display_name: 'Olivia Oidc',
      auth_provider: 'oidc',
      roles: [],
      permissions: [],
      org_id: defaultOrg.id,
    });
    for (const path of ['/api/admin/users', '/api/devices', '/api/sites']) {
      const denied = await c.request('GET', path, { token: tokens.access_token });
      expect(denied.status, path).toBe(403);
    }
    const refreshed = await c.request('POST', '/api/auth/refresh', { body: { refresh_token: tokens.refresh_token } });
    expect(refreshed.status).toBe(200);

    // The callback is single use: the same URL again is refused.
    const replay = await callback(back);
    expect(replay.status).toBe(400);
    expect(replay.body.code).toBe('OIDC_INVALID_STATE');
  });

  it('finds the same user on the next sign-in', async () => {
    const before = await c.db('users').where({ auth_provider: 'oidc' }).count({ n: '*' });
    const res = await callback(await idp.signIn(await authorize(), 'sub-olivia'));
    expect(res.status).toBe(302);
    const me = await c.request('GET', '/api/auth/me', { token: fragment(res.location as string).access_token });
    expect(me.body.username).toBe('olivia');
    expect(await c.db('users').where({ auth_provider: 'oidc' }).count({ n: '*' })).toEqual(before);
    const row = await c.db('users').where({ username: 'olivia' }).first('external_id', 'password_hash');
    expect(row).toEqual({ external_id: `${idp.issuer}#sub-olivia`, password_hash: null });
  });

  it('uses the e-mail as username when the provider sends no preferred_username', async () => {
    const res = await callback(await idp.signIn(await authorize(), 'sub-quinn'));
    expect(res.status).toBe(302);
    const me = await c.request('GET', '/api/auth/me', { token: fragment(res.location as string).access_token });
    expect(me.body.username).toBe('quinn@example.test');
  });

  it('never takes over a local account with the same username (409)', async () => {
    const created = await c.request('POST', '/api/admin/users', {
      token: c.adminToken,
      body: { username: 'lena', password: 'a-long-local-password-2' },
    });
    expect(created.status, created.text).toBe(201);
    const res = await callback(await idp.signIn(await authorize(), 'sub-lena'));
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('EXTERNAL_USERNAME_CONFLICT');
  });

  it("refuses a first sign-in under a system account's name (400 RESERVED_USERNAME) and creates no user", async () => {
    const res = await callback(await idp.signIn(await authorize(), 'sub-root'));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('RESERVED_USERNAME');
    expect(res.body.error).toMatch(/^Sign-in refused: the username 'Root' from OIDC is the name of a system account/);
    expect(await c.db('users').whereRaw('lower(username) = ?', ['root']).first()).toBeUndefined();
    const audit = await c.request('GET', '/api/admin/audit?kind=auth.provisioning_refused&all=true', { token: c.adminToken });
    expect(audit.body.entries[0]).toMatchObject({ username: 'Root', details: { provider: 'oidc', reason: 'reserved username' } });
  });

  it('a disabled user is refused with 403', async () => {
    const first = await callback(await idp.signIn(await authorize(), 'sub-peter'));
    expect(first.status).toBe(302);
    const user = await c.db('users').where({ username: 'peter' }).first('id');
    expect((await c.request('PUT', `/api/admin/users/${user.id}`, { token: c.adminToken, body: { is_active: false } })).status).toBe(200);
    const res = await callback(await idp.signIn(await authorize(), 'sub-peter'));
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('ACCOUNT_DISABLED');
  });

  it('the callback can land on another controller replica: the pending request lives in the database', async () => {
    const sink = new Writable({
      write(_chunk, _enc, done) {
        done();
      },
    });
    const replica: FastifyInstance = await buildApp({ config: { ...c.config, publicUrl: c.url }, db: c.db, log: createLogger('info', sink) });
    await replica.listen({ port: 0, host: '127.0.0.1' });
    try {
      const replicaUrl = `http://127.0.0.1:${(replica.server.address() as { port: number }).port}`;
      const back = await idp.signIn(await authorize(APP_URI, replicaUrl), 'sub-olivia');
      expect(back.startsWith(`${c.url}/api/auth/oidc/callback?`)).toBe(true);
      expect((await callback(back)).status).toBe(302);
    } finally {
      await replica.close();
    }
  });
});

describe('refusals', () => {
  beforeAll(async () => configure(oidcSettings()));

  it('a redirect_uri not on the allow-list is a 400 and no redirect', async () => {
    for (const uri of [
      'https://evil.example/steal',
      `${APP_URI}/more`,
      `${APP_URI}?x=1`,
      'https://console.example.test',
      `${APP_URI}#frag`,
      'javascript:alert(1)',
    ]) {
      const res = await c.request('GET', `/api/auth/oidc/authorize?redirect_uri=${encodeURIComponent(uri)}`);
      expect(res.status, uri).toBe(400);
      expect(res.body.code).toBe('OIDC_REDIRECT_URI_NOT_ALLOWED');
      expect(res.body.error).toContain('not on the allow-list');
      expect(res.headers.get('location')).toBeNull();
    }
    const missing = await c.request('GET', '/api/auth/oidc/authorize');
    expect(missing.status).toBe(400);
    expect(missing.body.error).toContain('redirect_uri');
  });

  it('a tampered state is a 400 (and the genuine one still works once)', async () => {
    const back = await idp.signIn(await authorize(), 'sub-olivia');
    const tampered = await callback(withParam(back, 'state', randomBytes(32).toString('base64url')));
    expect(tampered.status).toBe(400);
    expect(tampered.body).toMatchObject({
      code: 'OIDC_INVALID_STATE',
      error: 'Unknown, expired or already used sign-in state; start the sign-in again',
    });
    expect(tampered.location).toBeNull();
    expect((await callback(back)).status).toBe(302);
  });

  it('binds the state to the browser: an HttpOnly, SameSite=Lax cookie limited to the OIDC routes', async () => {
    const providerUrl = await authorize();
    const res = await fetch(`${c.url}/api/auth/oidc/authorize?redirect_uri=${encodeURIComponent(APP_URI)}`, { redirect: 'manual' });
    const setCookie = res.headers.get('set-cookie') as string;
    const state = new URL(res.headers.get('location') as string).searchParams.get('state');
    expect(setCookie).toBe(`switchboard_oidc_state=${state}; Max-Age=600; Path=/api/auth/oidc; HttpOnly; SameSite=Lax`);
    // Plain http here: no Secure flag (the https case is checked below).
    expect(setCookie).not.toContain('Secure');
    expect(providerUrl).not.toBe(res.headers.get('location'));
  });

  it('refuses a callback from a browser that did not start the sign-in (login CSRF) with 400, and spends that state', async () => {
    // The attacker starts a sign-in with their own account and stops before the callback...
    const attackerBack = await idp.signIn(await authorize(), 'sub-peter');
    const attackerCookie = browserCookie;
    // ...and lures a victim whose browser has no cookie, or a cookie of its own sign-in.
    const noCookie = await callback(attackerBack, '');
    expect(noCookie.status).toBe(400);
    expect(noCookie.body.code).toBe('OIDC_STATE_NOT_BOUND');
    expect(noCookie.body.error).toMatch(/did not start this sign-in.*start the sign-in again/);
    expect(noCookie.location).toBeNull();
    expect(noCookie.headers.get('set-cookie')).toContain('switchboard_oidc_state=; Max-Age=0');

    const attackerBack2 = await idp.signIn(await authorize(), 'sub-peter');
    await authorize(); // the victim's own flow sets the victim's cookie
    const otherCookie = await callback(attackerBack2);
    expect(otherCookie.status).toBe(400);
    expect(otherCookie.body.code).toBe('OIDC_STATE_NOT_BOUND');
    expect(otherCookie.body.error).toMatch(/another browser or tab/);
    // The refused state is spent: not even the attacker's own browser can finish it now.
    const again = await callback(attackerBack2, attackerCookie);
    expect(again.body.code).toBe('OIDC_INVALID_STATE');
  });

  it('marks the state cookie Secure when the public URL is https', async () => {
    const sink = new Writable({
      write(_chunk, _enc, done) {
        done();
      },
    });
    const replica: FastifyInstance = await buildApp({
      config: { ...c.config, publicUrl: 'https://switchboard.example.test' },
      db: c.db,
      log: createLogger('info', sink),
    });
    try {
      const res = await replica.inject({ method: 'GET', url: `/api/auth/oidc/authorize?redirect_uri=${encodeURIComponent(APP_URI)}` });
      expect(res.statusCode, res.body).toBe(302);
      expect(res.headers['set-cookie']).toMatch(
        /^switchboard_oidc_state=[\w-]+; Max-Age=600; Path=\/api\/auth\/oidc; HttpOnly; SameSite=Lax; Secure$/,
      );
    } finally {
      await replica.close();
    }
  });

  it('a missing state is a 400', async () => {
    const res = await callback(`${c.url}/api/auth/oidc/callback?code=abc`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('OIDC_INVALID_STATE');
    expect(res.body.error).toContain('no state');
  });

  it('a tampered code is a 401 saying the provider rejected it, and uses up the state', async () => {
    const back = await idp.signIn(await authorize(), 'sub-olivia');
    const code = new URL(back).searchParams.get('code') as string;
    const res = await callback(withParam(back, 'code', `${code.slice(0, -4)}AAAA`));
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('OIDC_LOGIN_FAILED');
    expect(res.body.error).toMatch(/rejected the authorization code: invalid_grant/);
    expect((await callback(back)).body.code).toBe('OIDC_INVALID_STATE');
  });

  it('an error from the provider (user cancelled) is a 401 naming it', async () => {
    const state = new URL(await authorize()).searchParams.get('state') as string;
    const res = await callback(`${c.url}/api/auth/oidc/callback?error=access_denied&error_description=End-User+aborted&state=${state}`);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'OIDC_LOGIN_FAILED', error: 'The identity provider answered access_denied: End-User aborted' });
  });

  it('an expired sign-in state is a 400', async () => {
    const providerUrl = await authorize();
    await c.db('oidc_auth_requests').update({ expires_at: new Date(Date.now() - 1000) });
    const res = await callback(await idp.signIn(providerUrl, 'sub-olivia'));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('OIDC_INVALID_STATE');
  });

  it('an unreachable provider is a 503 naming the issuer', async () => {
    const port = await freePort();
    await configure({ 'oidc.issuer': `http://127.0.0.1:${port}` });
    try {
      const res = await c.request('GET', `/api/auth/oidc/authorize?redirect_uri=${encodeURIComponent(APP_URI)}`);
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('OIDC_PROVIDER_UNAVAILABLE');
      expect(res.body.error).toBe(`Cannot read the OpenID configuration of http://127.0.0.1:${port}: connection refused`);
    } finally {
      await configure(oidcSettings());
    }
  });

  it('plain http is refused for an issuer that is not on loopback', async () => {
    await configure({ 'oidc.issuer': 'http://idp.example.test' });
    try {
      const res = await c.request('GET', `/api/auth/oidc/authorize?redirect_uri=${encodeURIComponent(APP_URI)}`);
      expect(res.status).toBe(503);
      expect(res.body.error).toContain('must use https');
    } finally {
      await configure(oidcSettings());
    }
  });

  it('never logs the client secret or the tokens', async () => {
    const res = await callback(await idp.signIn(await authorize(), 'sub-olivia'));
    const tokens = fragment(res.location as string);
    const logs = c.logs();
    expect(logs).not.toContain(idp.clientSecret);
    expect(logs).not.toContain(tokens.access_token);
    expect(logs).not.toContain(tokens.refresh_token);
  });
});

describe('settings from the environment', () => {
  it('maps SWITCHBOARD_OIDC_* (redirect URIs comma-separated) and names a bad variable', () => {
    expect(
      enterpriseSettingsFromEnv({
        SWITCHBOARD_OIDC_ISSUER: 'https://idp.example.com/realms/net',
        SWITCHBOARD_OIDC_CLIENT_ID: 'switchboard',
        SWITCHBOARD_OIDC_CLIENT_SECRET: 's3cret',
        SWITCHBOARD_OIDC_REDIRECT_URIS: 'https://console.example.com/cb, http://localhost:5173/cb',
      }),
    ).toEqual({
      'oidc.issuer': 'https://idp.example.com/realms/net',
      'oidc.client_id': 'switchboard',
      'oidc.client_secret': 's3cret',
      'oidc.redirect_uris': ['https://console.example.com/cb', 'http://localhost:5173/cb'],
    });
    expect(() => enterpriseSettingsFromEnv({ SWITCHBOARD_OIDC_REDIRECT_URIS: 'javascript:alert(1)' })).toThrow(/SWITCHBOARD_OIDC_REDIRECT_URIS/);
    expect(() => enterpriseSettingsFromEnv({ SWITCHBOARD_OIDC_ISSUER: 'idp.example.com' })).toThrow(/SWITCHBOARD_OIDC_ISSUER/);
  });
});

/**
 * A real OpenID provider for tests: the oidc-provider package on a free loopback port, with one
 * confidential client whose redirect URI is the controller's callback, and accounts that sign in
 * through oidc-provider's development interactions (login form, then consent), which `signIn`
 * drives over HTTP with a small cookie jar, the way a browser would.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { freePort } from './slapd';

export interface OidcAccount {
  preferred_username?: string;
  email?: string;
  name?: string;
}

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /**
   * Plays the browser from the controller's /oidc/authorize redirect (a URL at this provider) to
   * the point where the provider sends the browser back to the controller; returns that callback
   * URL without following it, so tests can use or tamper with it.
   */
  signIn(authorizationUrl: string, accountId: string): Promise<string>;
  close(): Promise<void>;
}

/** Cookies by name; enough for oidc-provider's interaction and session cookies. */
class CookieJar {
  private cookies = new Map<string, string>();

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*expires=/i.test(a) && new Date(a.split('=')[1]).getTime() < Date.now());
      if (!value || expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

export async function startOidcProvider(options: { callbackUrl: string; accounts: Record<string, OidcAccount> }): Promise<TestOidcProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = 'switchboard';
  const clientSecret = 'test-client-secret-0123456789abcdef';
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test-key' };

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.callbackUrl],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['test-cookie-signing-key'] },
    claims: { openid: ['sub'], email: ['email'], profile: ['name', 'preferred_username'] },
    pkce: { required: () => true },
    ttl: { AuthorizationCode: 60, Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, sub) {
      const account = options.accounts[sub];
      if (!account) return undefined;
      return { accountId: sub, claims: async () => ({ sub, ...account }) };
    },
  });
  const server = http.createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  if ((server.address() as AddressInfo).port !== port) throw new Error('OIDC provider did not get its port');

  const signIn = async (authorizationUrl: string, accountId: string): Promise<string> => {
    const jar = new CookieJar();
    let url = authorizationUrl;
    for (let step = 0; step < 20; step += 1) {
      if (!url.startsWith(issuer)) return url; // back at the controller
      let res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
      jar.store(res);
      if (res.status === 200 && new URL(url).pathname.startsWith('/interaction/')) {
        const page = await res.text();
        const prompt = page.includes('name="prompt" value="login"') ? 'login' : 'consent';
        const form = new URLSearchParams(prompt === 'login' ? { prompt, login: accountId, password: 'any' } : { prompt });
        res = await fetch(url, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
          body: form.toString(),
        });
        jar.store(res);
      }
      const location = res.headers.get('location');
      if (!location) throw new Error(`OIDC provider answered ${res.status} at ${url} without a redirect: ${(await res.text()).slice(0, 500)}`);
      url = new URL(location, url).href;
    }
    throw new Error('OIDC sign-in did not come back to the controller within 20 steps');
  };

  return {
    issuer,
    clientId,
    clientSecret,
    signIn,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

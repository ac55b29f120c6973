/**
 * POST /api/auth/oidc/test: OpenID discovery at the saved issuer, against the real local issuer
 * of the auth suites (oidc-provider), an address nobody listens on, a server that is no OpenID
 * issuer, and a plain-http issuer off loopback. The client secret never comes back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { freePort } from '../helpers/net';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider';

let c: TestController;
let idp: TestOidcProvider;

beforeAll(async () => {
  c = await startTestController();
  idp = await startOidcProvider({ callbackUrl: `${c.url}/api/auth/oidc/callback`, accounts: {} });
});
afterAll(async () => {
  await idp?.close();
  await c?.close();
});

async function configure(values: Record<string, unknown>): Promise<void> {
  const res = await c.request('PUT', '/api/admin/settings', { token: c.adminToken, body: { settings: values } });
  expect(res.status, res.text).toBe(200);
}
const test = () => c.request('POST', '/api/auth/oidc/test', { token: c.adminToken });

describe('POST /api/auth/oidc/test', () => {
  it('says what is missing when OIDC is not configured', async () => {
    const res = await test();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: false, message: 'OIDC is not configured: set oidc.issuer and oidc.client_id' });
  });

  it('reports the issuer and its endpoints, never the client secret', async () => {
    await configure({
      'oidc.issuer': idp.issuer,
      'oidc.client_id': idp.clientId,
      'oidc.client_secret': idp.clientSecret,
      'oidc.redirect_uris': ['https://console.example.test/'],
    });
    const res = await test();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      ok: true,
      issuer: idp.issuer,
      client_id: idp.clientId,
      callback_url: `${c.url}/api/auth/oidc/callback`,
      warnings: [],
    });
    expect(res.body.message).toBe(`Read the OpenID configuration of ${idp.issuer}`);
    for (const endpoint of ['authorization', 'token', 'userinfo', 'jwks'])
      expect(res.body.endpoints[endpoint], endpoint).toMatch(new RegExp(`^${idp.issuer}/`));
    expect(res.text).not.toContain(idp.clientSecret);
  });

  it('warns about a public client and an empty redirect allow-list', async () => {
    await configure({ 'oidc.client_secret': null, 'oidc.redirect_uris': [] });
    const res = await test();
    expect(res.body.ok).toBe(true);
    expect(res.body.warnings).toEqual([expect.stringMatching(/public client/), expect.stringMatching(/redirect_uris is empty/)]);
  });

  it('says why discovery failed: nobody listening, not an OpenID issuer, plain http off loopback', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    await configure({ 'oidc.issuer': nobody });
    let res = await test();
    expect(res.body).toMatchObject({ ok: false, issuer: nobody, endpoints: { authorization: null, token: null, userinfo: null, jwks: null } });
    expect(res.body.message).toBe(`Cannot read the OpenID configuration of ${nobody}: connection refused`);

    // The controller itself answers, but has no OpenID configuration.
    await configure({ 'oidc.issuer': c.url });
    res = await test();
    expect(res.body.ok).toBe(false);
    expect(res.body.message).toMatch(new RegExp(`^Cannot read the OpenID configuration of ${c.url}: `));

    await configure({ 'oidc.issuer': 'http://idp.example.test' });
    res = await test();
    expect(res.body).toMatchObject({
      ok: false,
      message: 'oidc.issuer must use https (plain http is accepted only for loopback addresses): http://idp.example.test',
    });
  });

  it('needs a signed-in caller', async () => {
    expect((await c.request('POST', '/api/auth/oidc/test')).status).toBe(401);
  });
});

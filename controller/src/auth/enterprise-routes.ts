import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { SettingsService } from '../platform/settings-service';
import { clientInfo } from '../http/client-info';
import { Nullable, errorResponses } from '../http/schemas';
import { ldapEnabled } from './ldap-service';
import { clearedStateCookie, readStateCookie, stateCookie } from './oidc-cookie';
import { REQUEST_TTL_MS, oidcEnabled } from './oidc-service';
import { TokenPairSchema } from './schemas';

const tags = ['auth'];

const LdapLoginBody = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 256 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    client_type: Type.Optional(Type.Union([Type.Literal('admin_ui'), Type.Literal('terminal')], { default: 'admin_ui' })),
  },
  { additionalProperties: false },
);

const LdapTestSchema = Type.Object({
  ok: Type.Boolean({ description: 'True when the service bind works and the base DN is readable.' }),
  message: Type.String({ description: 'What worked, or why not.' }),
  url: Type.String(),
  bind_dn: Type.String(),
  base_dn: Type.String(),
  tls: Type.Union([Type.Literal('ldaps'), Type.Literal('starttls'), Type.Literal('none')]),
  warnings: Type.Array(Type.String()),
});

const Endpoint = Nullable(Type.String());
const OidcTestSchema = Type.Object({
  ok: Type.Boolean({ description: 'True when discovery at oidc.issuer works and names the endpoints sign-in needs.' }),
  message: Type.String({ description: 'What worked, or why not (unreachable, not an OpenID issuer, TLS).' }),
  issuer: Type.String({ description: 'The issuer the provider names (the setting when discovery failed).' }),
  client_id: Type.String(),
  callback_url: Type.String({ description: 'Register this redirect URI at the provider.' }),
  endpoints: Type.Object({ authorization: Endpoint, token: Endpoint, userinfo: Endpoint, jwks: Endpoint }),
  warnings: Type.Array(Type.String()),
});

const AuthorizeQuery = Type.Object({
  redirect_uri: Type.String({
    minLength: 1,
    maxLength: 2048,
    description: 'Where the browser is sent with the tokens in the fragment; must be on oidc.redirect_uris.',
  }),
});

// Providers may add parameters (session_state, iss, ...); they are passed on to the code exchange.
const CallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    state: Type.Optional(Type.String({ maxLength: 1024 })),
    error: Type.Optional(Type.String({ maxLength: 1024 })),
    error_description: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: true },
);

const Redirect = (description: string) => Type.Null({ description });

/** GET /api/auth/providers: local always, LDAP and OIDC when their settings are filled in (secrets are not read). */
export async function enterpriseProviders(settings: SettingsService): Promise<{ name: string; enabled: boolean }[]> {
  const [url, baseDn, issuer, clientId] = await Promise.all(
    ['ldap.url', 'ldap.base_dn', 'oidc.issuer', 'oidc.client_id'].map((key) => settings.get<string>(key).then((v) => v.trim())),
  );
  return [
    { name: 'local', enabled: true },
    { name: 'ldap', enabled: ldapEnabled({ url, baseDn }) },
    { name: 'oidc', enabled: oidcEnabled({ issuer, clientId }) },
  ];
}

/**
 * The enterprise rows of API.md's auth table: /ldap, /ldap/test, /oidc/authorize, /oidc/callback,
 * plus the check of /login's public_key. Registered inside the /api/auth plugin (not encapsulated,
 * see the end of the file), so its routes get the same rate limit and failed-login lockout.
 */
export async function enterpriseRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { ldap, oidc, config } = app.services;

  // A malformed public_key on /login is a 400 before any session exists (the certificate is
  // issued after the password check, which opens the session).
  app.addHook('preHandler', async (request) => {
    if (request.method !== 'POST' || !request.routeOptions.url?.endsWith('/api/auth/login')) return;
    const publicKey = (request.body as { public_key?: string } | undefined)?.public_key;
    if (publicKey !== undefined) app.services.sshCa.parsePublicKey(publicKey);
  });

  app.post(
    '/ldap',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Sign in with an LDAP or Active Directory account',
        description:
          'Search-then-bind against ldap.url. Returns the same token pair as /login; the first sign-in creates a user without roles in the ' +
          'default organization.',
        body: LdapLoginBody,
        response: { 200: TokenPairSchema, ...errorResponses(400, 401, 409, 429, 503) },
      },
    },
    async (request) => {
      const { username, password, client_type = 'admin_ui' } = request.body;
      return ldap.login(username, password, client_type, clientInfo(request));
    },
  );

  app.post(
    '/ldap/test',
    {
      config: { authenticated: true },
      schema: {
        tags,
        summary: 'Test the configured LDAP service bind',
        description:
          'Connects with the saved settings, binds as ldap.bind_dn and reads ldap.base_dn. Always 200; ok and message say whether it works and why not.',
        response: { 200: LdapTestSchema, ...errorResponses(401, 429) },
      },
    },
    async () => ldap.test(),
  );

  app.post(
    '/oidc/test',
    {
      config: { authenticated: true },
      schema: {
        tags,
        summary: 'Test the configured OIDC issuer',
        description:
          'OpenID discovery at oidc.issuer with the saved settings (10 s timeout; https, or plain http on loopback only). Always 200; ok and ' +
          'message say whether it works and why not. Never returns the client secret.',
        response: { 200: OidcTestSchema, ...errorResponses(401, 429) },
      },
    },
    async () => oidc.test(),
  );

  app.get(
    '/oidc/authorize',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Start an OIDC sign-in (browser)',
        description:
          'Redirects to the identity provider (authorization code flow with PKCE) and sets an HttpOnly state cookie (Path=/api/auth/oidc) ' +
          'that the callback checks. After sign-in the browser comes back to redirect_uri with #access_token, refresh_token, ' +
          'token_type=Bearer and expires_in.',
        querystring: AuthorizeQuery,
        response: { 302: Redirect('To the identity provider.'), ...errorResponses(400, 429, 503) },
      },
    },
    async (request, reply) => {
      const { url, state } = await oidc.authorizationUrl(request.query.redirect_uri);
      return reply
        .header('cache-control', 'no-store')
        .header('set-cookie', stateCookie(state, REQUEST_TTL_MS / 1000, config.publicUrl))
        .redirect(url, 302);
    },
  );

  app.get(
    '/oidc/callback',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'OIDC redirect target (called by the identity provider)',
        description:
          'Register <SWITCHBOARD_PUBLIC_URL>/api/auth/oidc/callback at the provider. Redirects to the redirect_uri given to /oidc/authorize ' +
          'with the token pair in the URL fragment. 400 OIDC_STATE_NOT_BOUND when the browser does not send the state cookie set by /oidc/authorize.',
        querystring: CallbackQuery,
        response: { 302: Redirect('To redirect_uri with the token pair in the fragment.'), ...errorResponses(400, 401, 403, 409, 429, 503) },
      },
    },
    async (request, reply) => {
      const rawQuery = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
      // The cookie has done its job whatever the outcome; the error handler keeps this header.
      reply.header('set-cookie', clearedStateCookie(config.publicUrl));
      const location = await oidc.finish(request.query, rawQuery, readStateCookie(request.headers.cookie), clientInfo(request));
      // The callback URL carries the code: keep it out of the Referer of the next page.
      return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(location, 302);
    },
  );
}

// Not encapsulated (fastify-plugin's "skip-override"): the routes and the /login hook belong to
// the /api/auth plugin that registers this one.
(enterpriseRoutes as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

import type { AuditService } from './platform/audit-service';
import type { SettingsService } from './platform/settings-service';
import type { AuthService } from './auth/auth-service';
import type { TokenSigner } from './auth/tokens';
import type { ControllerConfig } from './config';
import type { Db } from './db/knex';
import type { SecretBox } from '../../shared/src/crypto/secret-box';

/**
 * The services an area can reach through `app.services`. Areas that offer services to
 * others add their fields here by declaration merging in their own folder.
 */
export interface Services {
  config: ControllerConfig;
  db: Db;
  secrets: SecretBox;
  signer: TokenSigner;
  settings: SettingsService;
  audit: AuditService;
  auth: AuthService;
  /** Sign-in providers for GET /api/auth/providers; enterprise sign-in replaces it. */
  providers(): Promise<{ name: string; enabled: boolean }[]>;
  /** Present when the service has an SSH CA: issues user certificates on /login. */
  sshCa?: { certify(publicKey: string, principal: string, lifetimeSeconds: number): Promise<string> };
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
}

import type { AuditService } from '../platform/audit-service';
import type { SettingsService } from '../platform/settings-service';
import { appError } from '../errors/app-error';
import type { UserRow } from './auth-store';
import { permissionsFor } from './permissions';
import { isReservedUsername } from './reserved-usernames';
import { randomSerial, type SshCertificateAuthority } from './ssh-ca';
import type { SshCertificateStore } from './ssh-certificate-store';
import { encodeKrl } from './ssh-krl';

export const SSH_CERTIFICATE_PERMISSION = 'ssh.certificate' as const;
const HOUR = 3600;

/**
 * Who gets an SSH user certificate and for how long, the record of each one issued, and the key
 * revocation list sshd reads (RevokedKeys): certificates of sessions that ended (logout, password
 * change, a disabled user, a revoked session) until they expire.
 */
export class SshCertificates {
  constructor(
    private readonly ca: SshCertificateAuthority,
    private readonly store: SshCertificateStore,
    private readonly settings: SettingsService,
    private readonly audit: AuditService,
  ) {}

  /**
   * 403 before any session opens when the user's roles do not grant ssh.certificate, or when the
   * username, which is the certificate's principal, is a system account's (reserved-usernames.ts):
   * an account made before such names were refused. The one exception is a platform
   * administrator (the bootstrap account, `admin` by default, may carry such a name), who holds
   * every permission of every organization already.
   */
  assertPermitted(user: UserRow): void {
    if (!permissionsFor(user.roles, user.is_platform_admin).includes(SSH_CERTIFICATE_PERMISSION)) {
      throw appError(
        'SSH_CERTIFICATE_NOT_PERMITTED',
        `Your roles do not include the ${SSH_CERTIFICATE_PERMISSION} permission: sign in without public_key, or ask an administrator for the operator role`,
      );
    }
    if (isReservedUsername(user.username) && !user.is_platform_admin) {
      throw appError(
        'SSH_CERTIFICATE_NOT_PERMITTED',
        `No SSH certificate for '${user.username}': its principal would be the name of a system account on the servers that trust the CA. ` +
          'Sign in without public_key, or ask an administrator for an account with another name',
      );
    }
  }

  /** Valid for the access token's lifetime, capped by ssh.certificate_max_hours. */
  async issue(publicKey: string, user: UserRow, sessionId: string, accessLifetimeSeconds: number): Promise<string> {
    const capHours = await this.settings.get<number>('ssh.certificate_max_hours');
    const lifetime = Math.min(accessLifetimeSeconds, capHours * HOUR);
    const serial = randomSerial();
    const certificate = await this.ca.certify(publicKey, user.username, lifetime, serial);
    const validUntil = new Date(Date.now() + lifetime * 1000);
    await this.store.record({
      serial: serial.toString('hex'),
      user_id: user.id,
      session_id: sessionId,
      key_id: `switchboard:${user.username}`,
      valid_until: validUntil,
    });
    // The serial ties what sshd logs ("serial N") to the person and session.
    await this.audit.record({
      kind: 'auth.ssh_certificate_issued',
      orgId: user.home_org_id,
      userId: user.id,
      username: user.username,
      details: { serial: BigInt(`0x${serial.toString('hex')}`).toString(), session_id: sessionId, valid_until: validUntil.toISOString() },
    });
    await this.store.pruneExpired();
    return certificate;
  }

  /** The KRL: serials of revoked certificates still inside their validity (expired ones sshd refuses anyway). */
  async krl(): Promise<Buffer> {
    const { serials, latest } = await this.store.revoked();
    return encodeKrl({
      caKey: this.ca.publicKeyBlob,
      serials: serials.map((s) => BigInt(`0x${s}`)),
      // Milliseconds of the latest revocation: grows whenever a certificate is revoked.
      version: BigInt(latest ? latest.getTime() : 0),
      generatedAt: new Date(),
      comment: 'switchboard SSH CA: revoked user certificates',
    });
  }
}

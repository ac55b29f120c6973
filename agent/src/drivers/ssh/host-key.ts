/**
 * Trust on first use for SSH host keys, as OpenSSH's known_hosts with
 * StrictHostKeyChecking=accept-new: with no pinned key the session goes ahead and reports the
 * key it saw (the controller pins the first one); with a pinned key any other key fails the
 * session during key exchange, before a password or private key is offered.
 */
import { createHash } from 'node:crypto';
import { DriverError, type DeviceTarget, type SshHostKey } from '../types';

/** OpenSSH's form: `SHA256:` and the unpadded base64 of the SHA-256 of the key blob (32 bytes: 43 characters and one '='). */
export function hostKeyFingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').slice(0, 43)}`;
}

/** The key type named at the start of an SSH public key blob (ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa, …). */
export function hostKeyType(blob: Buffer): string {
  if (blob.length < 4) return 'unknown';
  const len = blob.readUInt32BE(0);
  if (len === 0 || len > 64 || 4 + len > blob.length) return 'unknown';
  return blob.subarray(4, 4 + len).toString('latin1');
}

/** One session's host key check: pass `verify` as ssh2's hostVerifier. */
export interface HostKeyCheck {
  verify(key: Buffer): boolean;
  /** The key the device offered, once key exchange got that far. */
  readonly seen: SshHostKey | undefined;
  /** Set when the device offered a key other than the pinned one. */
  readonly mismatch: DriverError | undefined;
}

export function hostKeyCheck(target: Pick<DeviceTarget, 'name' | 'host' | 'ssh_host_key'>, port: number): HostKeyCheck {
  let seen: SshHostKey | undefined;
  let mismatch: DriverError | undefined;
  const pinned = target.ssh_host_key ?? null;
  return {
    verify(key: Buffer): boolean {
      seen = { type: hostKeyType(key), fingerprint: hostKeyFingerprint(key) };
      if (!pinned || pinned.fingerprint === seen.fingerprint) return true;
      // "key:" not "key mismatch": the config area masks the word after "key " in stored errors.
      mismatch = new DriverError(
        'hostkey',
        `host key: mismatch for ${target.name} (${target.host}:${port}): expected ${pinned.fingerprint}, device offered ${seen.fingerprint} (${seen.type}). ` +
          'If the device was replaced or re-keyed, clear the pinned key: DELETE /api/devices/:id/ssh-host-key',
      );
      return false;
    },
    get seen() {
      return seen;
    },
    get mismatch() {
      return mismatch;
    },
  };
}

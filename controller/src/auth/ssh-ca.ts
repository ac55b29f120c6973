import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import sshpk from 'sshpk';
import { ConfigError } from '../config';
import { appError } from '../errors/app-error';

/** File names of the generated CA inside the data dir. */
export const SSH_CA_KEY_FILE = 'ssh_ca_key';
export const SSH_CA_PUBLIC_KEY_FILE = 'ssh_ca_key.pub';

const MIN_RSA_BITS = 2048;
// What ssh-keygen grants by default: a certificate that works like an ordinary key.
const EXTENSIONS = ['permit-X11-forwarding', 'permit-agent-forwarding', 'permit-port-forwarding', 'permit-pty', 'permit-user-rc'];
// Tolerates a little clock skew between the controller and the servers that check the certificate.
const BACKDATE_SECONDS = 60;

/**
 * The service's SSH certificate authority: signs OpenSSH user certificates for the public key a
 * user sends to /login, with the username as the only principal (ssh-certificates.ts decides who
 * gets one, for how long, and lists revoked ones).
 */
export class SshCertificateAuthority {
  constructor(
    private readonly key: sshpk.PrivateKey,
    /** Where the key came from, for logs: a file path. */
    readonly source: string,
  ) {}

  /** The CA public key in authorized_keys form, for sshd's TrustedUserCAKeys. */
  get publicKey(): string {
    return publicLine(this.key);
  }

  /** Parses a user's OpenSSH public key; 400 INVALID_SSH_PUBLIC_KEY says what is wrong. */
  parsePublicKey(text: string): sshpk.Key {
    const line = text.trim();
    if (!line || /[\r\n]/.test(line))
      throw appError('INVALID_SSH_PUBLIC_KEY', 'public_key must be one line: "<type> <base64> [comment]", as in a .pub file');
    let key: sshpk.Key;
    try {
      key = sshpk.parseKey(line, 'ssh');
    } catch (err) {
      const detail = (err as Error).message.replace(/^Failed to parse .* as a valid ssh format key: /, '');
      throw appError('INVALID_SSH_PUBLIC_KEY', `public_key is not a valid OpenSSH public key (${detail})`);
    }
    if (key.type === 'dsa')
      throw appError('INVALID_SSH_PUBLIC_KEY', 'DSA keys are not accepted by current OpenSSH; use an Ed25519, ECDSA or RSA key');
    if (key.type === 'rsa' && key.size < MIN_RSA_BITS) {
      throw appError('INVALID_SSH_PUBLIC_KEY', `RSA public_key has ${key.size} bits; at least ${MIN_RSA_BITS} are needed`);
    }
    return key;
  }

  /** The CA public key in SSH wire format, as a key revocation list names it. */
  get publicKeyBlob(): Buffer {
    return this.key.toPublic().toBuffer('rfc4253');
  }

  /** An OpenSSH user certificate ("<type>-cert-v01@openssh.com base64 comment") for the key. */
  async certify(publicKey: string, principal: string, lifetimeSeconds: number, serial: Buffer = randomSerial()): Promise<string> {
    const subjectKey = this.parsePublicKey(publicKey);
    const now = Date.now();
    const cert = sshpk.createCertificate(sshpk.identityForUser(principal), subjectKey, sshpk.identityForUser('switchboard-ssh-ca'), this.key, {
      validFrom: new Date(now - BACKDATE_SECONDS * 1000),
      validUntil: new Date(now + lifetimeSeconds * 1000),
      serial,
    });
    // Key id and extensions are set on the OpenSSH signature, then the certificate is signed again.
    cert.signatures = {
      openssh: {
        keyId: `switchboard:${principal}`,
        exts: EXTENSIONS.map((name) => ({ name, critical: false, data: Buffer.alloc(0) })),
      } as unknown as sshpk.Format.OpenSshSignature,
    };
    cert.signWith(this.key);
    return cert.toString('openssh', { comment: `switchboard:${principal}` } as sshpk.Format.WriteOptions);
  }
}

/** 8 random bytes, never all zero (a KRL cannot revoke serial 0). */
export function randomSerial(): Buffer {
  for (;;) {
    const serial = randomBytes(8);
    if (serial.some((b) => b !== 0)) return serial;
  }
}

function publicLine(key: sshpk.PrivateKey): string {
  const pub = key.toPublic();
  pub.comment = 'switchboard-ssh-ca';
  return pub.toString('ssh');
}

function parseCaKey(text: string, where: string): sshpk.PrivateKey {
  try {
    return sshpk.parsePrivateKey(text, 'auto');
  } catch (err) {
    const encrypted = (err as Error).name === 'KeyEncryptedError';
    throw new ConfigError(
      encrypted
        ? `SWITCHBOARD_SSH_CA_KEY: ${where} is passphrase-protected; give an unencrypted key file with mode 0600`
        : `SWITCHBOARD_SSH_CA_KEY: ${where} is not an SSH private key (${(err as Error).message})`,
    );
  }
}

/**
 * The SSH CA: the key file named by SWITCHBOARD_SSH_CA_KEY (so several controllers share one CA),
 * or an Ed25519 key generated into the data dir on first start (mode 0600) with its .pub beside it.
 */
export function loadSshCa(dataDir: string, env: NodeJS.ProcessEnv = process.env): SshCertificateAuthority {
  const supplied = env.SWITCHBOARD_SSH_CA_KEY;
  if (supplied) {
    const path = resolve(supplied);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new ConfigError(`SWITCHBOARD_SSH_CA_KEY names a file that cannot be read: ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    return new SshCertificateAuthority(parseCaKey(text, path), path);
  }
  const file = join(dataDir, SSH_CA_KEY_FILE);
  if (!existsSync(file)) {
    const key = sshpk.generatePrivateKey('ed25519');
    try {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      writeFileSync(file, key.toString('openssh'), { mode: 0o600, flag: 'wx' });
      writeFileSync(join(dataDir, SSH_CA_PUBLIC_KEY_FILE), `${publicLine(key)}\n`, { mode: 0o644 });
    } catch (err) {
      // Another process sharing the data dir made it first: use theirs.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new ConfigError(`SWITCHBOARD_DATA_DIR is not writable: cannot create ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      }
    }
  }
  return new SshCertificateAuthority(parseCaKey(readFileSync(file, 'utf8'), file), file);
}

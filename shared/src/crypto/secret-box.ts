import { hkdfSync, webcrypto } from 'node:crypto';
import { CompactEncrypt, compactDecrypt } from 'jose';

/**
 * Authenticated encryption for secrets at rest (device credentials, NetBox tokens, LDAP
 * bind passwords): compact JWE, direct key agreement, A256GCM, keyed from the master key.
 */
export class SecretBox {
  /** Imported once: given raw bytes, jose would import the key again on every call. */
  private readonly key: Promise<webcrypto.CryptoKey>;

  constructor(masterKey: Buffer) {
    const raw = new Uint8Array(hkdfSync('sha256', masterKey, 'switchboard', 'secrets-at-rest-a256gcm', 32));
    this.key = webcrypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);
  }

  async seal(plaintext: string): Promise<string> {
    return new CompactEncrypt(new TextEncoder().encode(plaintext)).setProtectedHeader({ alg: 'dir', enc: 'A256GCM' }).encrypt(await this.key);
  }

  async open(sealed: string): Promise<string> {
    const { plaintext } = await compactDecrypt(sealed, await this.key);
    return new TextDecoder().decode(plaintext);
  }

  /** Seals when given a string, keeps null as null (a cleared secret). */
  async sealOptional(plaintext: string | null | undefined): Promise<string | null | undefined> {
    return typeof plaintext === 'string' ? this.seal(plaintext) : plaintext;
  }
}

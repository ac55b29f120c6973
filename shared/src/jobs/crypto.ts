/**
 * Keys, signatures and encryption of the job protocol (all through jose).
 *
 * - Each agent has one P-256 key pair: ES256 to sign its events, ECDH-ES+A256KW to receive
 *   device secrets. The private key never leaves the agent's state dir.
 * - The controller signs job messages and heartbeat replies with an Ed25519 key derived from
 *   its master key, so every replica signs with the same key and agents can tell a genuine job
 *   from one somebody else published on NATS.
 */
import { createPrivateKey, createPublicKey, hkdfSync, type KeyObject, type webcrypto } from 'node:crypto';
import {
  CompactSign,
  FlattenedSign,
  GeneralEncrypt,
  compactVerify,
  decodeProtectedHeader,
  exportJWK,
  flattenedDecrypt,
  flattenedVerify,
  generateKeyPair,
  importJWK,
  importSPKI,
  type JWK,
} from 'jose';
import type { GeneralJwe } from './messages';

/** A key as jose answers it in Node (WebCrypto key) or as node:crypto makes it. */
export type AnyKey = webcrypto.CryptoKey | KeyObject;

export const AGENT_SIGN_ALG = 'ES256';
export const SECRETS_KEY_ALG = 'ECDH-ES+A256KW';
export const SECRETS_ENC = 'A256GCM';
export const CONTROLLER_SIGN_ALG = 'EdDSA';

export interface PublicJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
}

export interface AgentKeys {
  privateJwk: JWK;
  publicJwk: PublicJwk;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export async function generateAgentKeys(): Promise<AgentKeys> {
  const { privateKey, publicKey } = await generateKeyPair(AGENT_SIGN_ALG, { extractable: true });
  const privateJwk = await exportJWK(privateKey);
  return { privateJwk, publicJwk: toPublicJwk(await exportJWK(publicKey)) };
}

function toPublicJwk(jwk: JWK): PublicJwk {
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.x !== 'string' || typeof jwk.y !== 'string') {
    throw new Error('the public key must be an EC key on curve P-256');
  }
  return { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y };
}

/** Accepts a JWK object or an SPKI PEM; answers the normalized public JWK or throws saying why. */
export async function normalizePublicKey(input: unknown): Promise<PublicJwk> {
  if (typeof input === 'string') {
    if (!input.includes('-----BEGIN PUBLIC KEY-----')) throw new Error('public_key must be a JWK object or a PEM "PUBLIC KEY" block');
    let key;
    try {
      key = await importSPKI(input.trim(), AGENT_SIGN_ALG, { extractable: true });
    } catch (err) {
      throw new Error(`public_key is not a P-256 public key: ${(err as Error).message}`);
    }
    return toPublicJwk(await exportJWK(key));
  }
  if (!input || typeof input !== 'object') throw new Error('public_key must be a JWK object or a PEM string');
  const jwk = input as JWK;
  if ('d' in jwk) throw new Error('public_key holds a private key; send only the public part');
  const normalized = toPublicJwk(jwk);
  try {
    await importJWK(normalized, AGENT_SIGN_ALG); // checks the point is on the curve
  } catch (err) {
    throw new Error(`public_key is not a valid P-256 key: ${(err as Error).message}`);
  }
  return normalized;
}

// ---- device secrets -------------------------------------------------------------------------

export interface Recipient {
  kid: string;
  jwk: PublicJwk;
}

/** One JWE readable by each recipient (one encrypted CEK per agent). */
export async function encryptSecrets(secrets: Record<string, unknown>, recipients: Recipient[]): Promise<GeneralJwe> {
  if (recipients.length === 0) throw new Error('no recipients for the device secrets');
  const jwe = new GeneralEncrypt(encoder.encode(JSON.stringify(secrets))).setProtectedHeader({ enc: SECRETS_ENC });
  for (const r of recipients) {
    jwe.addRecipient(await importJWK(r.jwk, SECRETS_KEY_ALG)).setUnprotectedHeader({ alg: SECRETS_KEY_ALG, kid: r.kid });
  }
  return (await jwe.encrypt()) as unknown as GeneralJwe;
}

export function isRecipient(jwe: GeneralJwe, kid: string): boolean {
  return jwe.recipients.some((r) => r.header?.kid === kid);
}

/** Decrypts the recipient entry addressed to `kid` (no trial decryption of the others). */
export async function decryptSecrets(jwe: GeneralJwe, kid: string, privateKey: AnyKey): Promise<Record<string, unknown>> {
  const mine = jwe.recipients.find((r) => r.header?.kid === kid);
  if (!mine) throw new Error('this agent is not a recipient of the job secrets');
  const { plaintext } = await flattenedDecrypt(
    {
      protected: jwe.protected,
      unprotected: jwe.unprotected as never,
      header: mine.header as never,
      encrypted_key: mine.encrypted_key,
      iv: jwe.iv,
      ciphertext: jwe.ciphertext,
      tag: jwe.tag,
      aad: jwe.aad,
    },
    privateKey,
  );
  return JSON.parse(decoder.decode(plaintext)) as Record<string, unknown>;
}

export async function importAgentPrivateKey(jwk: JWK): Promise<{ sign: AnyKey; decrypt: AnyKey }> {
  const sign = (await importJWK(jwk, AGENT_SIGN_ALG)) as AnyKey;
  const decrypt = (await importJWK(jwk, SECRETS_KEY_ALG)) as AnyKey;
  return { sign, decrypt };
}

// ---- signatures -----------------------------------------------------------------------------
//
// Two forms travel, both JWS (RFC 7515):
//
// - compact: `header.payload.signature`, the payload base64url-encoded. The controller's job
//   messages and heartbeat replies, agents' heartbeats, and every event of older agents.
// - detached: `header..signature` + "\n" + the payload JSON as is. Agents' events (a backup
//   result carries its config and transcript, tens of KB, which base64url would grow by a third
//   and cost a JS encode and decode on each side). The header holds `b64: false` and
//   `crit: ["b64"]` (RFC 7797: the payload is signed unencoded), the first line is the compact
//   serialization with detached content (RFC 7515 Appendix F), and the payload follows the line
//   break. JSON.stringify never writes a raw line break and base64url has none, so the first
//   "\n" ends the signature.
//
// verifyJson, signerOf and unverifiedPayload accept both forms.

/** Compact JWS over the JSON of `payload`; `kid` names the signer. */
export async function signJson(payload: unknown, key: AnyKey, alg: string, kid?: string): Promise<string> {
  return new CompactSign(encoder.encode(JSON.stringify(payload))).setProtectedHeader(kid ? { alg, kid } : { alg }).sign(key);
}

/** JWS with the JSON of `payload` unencoded and detached (RFC 7797), sent after a line break. */
export async function signJsonDetached(payload: unknown, key: AnyKey, alg: string, kid?: string): Promise<string> {
  const json = JSON.stringify(payload);
  const jws = await new FlattenedSign(encoder.encode(json))
    .setProtectedHeader(kid ? { alg, kid, b64: false, crit: ['b64'] } : { alg, b64: false, crit: ['b64'] })
    .sign(key);
  return `${jws.protected}..${jws.signature}\n${json}`;
}

/** The detached form split into its parts, or null for a compact token. Throws when malformed. */
function detachedParts(token: string): { protectedHeader: string; signature: string; payload: string } | null {
  const nl = token.indexOf('\n');
  if (nl < 0) return null;
  const dot = token.indexOf('.');
  const third = token.indexOf('.', dot + 2);
  if (dot <= 0 || dot > nl || token.charCodeAt(dot + 1) !== 46 /* . */ || (third >= 0 && third < nl)) throw new Error('malformed detached JWS');
  return { protectedHeader: token.slice(0, dot), signature: token.slice(dot + 2, nl), payload: token.slice(nl + 1) };
}

/** The `kid` of a JWS in either form, read before verifying so the caller can pick the key. */
export function signerOf(token: string): string | null {
  const dot = token.indexOf('.');
  if (dot <= 0) return null;
  try {
    const kid = decodeProtectedHeader({ protected: token.slice(0, dot) }).kid;
    return typeof kid === 'string' ? kid : null;
  } catch {
    return null;
  }
}

/** Checks the signature of a JWS in either form against `key` and answers the parsed payload. */
export async function verifyJson(token: string, key: AnyKey, alg: string): Promise<unknown> {
  const detached = detachedParts(token);
  if (!detached) {
    const { payload } = await compactVerify(token, key, { algorithms: [alg] });
    return JSON.parse(decoder.decode(payload));
  }
  await flattenedVerify(
    { protected: detached.protectedHeader, signature: detached.signature, payload: encoder.encode(detached.payload) },
    key,
    { algorithms: [alg] },
  );
  return JSON.parse(detached.payload);
}

/**
 * The payload of a JWS in either form, parsed WITHOUT checking the signature: only for a message
 * that is refused anyway (a revoked agent's event, to hand its job back). Throws when unreadable.
 */
export function unverifiedPayload(token: string): unknown {
  const detached = detachedParts(token);
  if (detached) return JSON.parse(detached.payload);
  const start = token.indexOf('.') + 1;
  const end = token.indexOf('.', start);
  if (start <= 0 || end < 0) throw new Error('malformed compact JWS');
  return JSON.parse(Buffer.from(token.slice(start, end), 'base64url').toString('utf8'));
}

export async function importAgentPublicKey(jwk: PublicJwk): Promise<AnyKey> {
  return (await importJWK(jwk, AGENT_SIGN_ALG)) as AnyKey;
}

// ---- the controller's key -------------------------------------------------------------------

const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface ControllerKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicJwk: JWK;
}

/** The same key on every replica: Ed25519 seeded by HKDF of the master key. */
export function controllerKeyFromSecret(masterKey: Buffer): ControllerKey {
  const seed = Buffer.from(hkdfSync('sha256', masterKey, 'switchboard', 'job-signing-ed25519', 32));
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey(privateKey);
  const publicJwk = publicKey.export({ format: 'jwk' }) as JWK;
  return { privateKey, publicKey, publicJwk };
}

export function importControllerPublicKey(jwk: JWK): KeyObject {
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new Error('controller key must be an Ed25519 JWK');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
}

/**
 * Keys, signatures and encryption of the job protocol: JWE through jose, JWS made and checked
 * with node:crypto one-shot sign/verify (the same JWS bytes jose makes; see the signatures section).
 *
 * - Each agent has one P-256 key pair: ES256 to sign its events, ECDH-ES+A256KW to receive
 *   device secrets. The private key never leaves the agent's state dir.
 * - The controller signs job messages and heartbeat replies with an Ed25519 key derived from
 *   its master key, so every replica signs with the same key and agents can tell a genuine job
 *   from one somebody else published on NATS.
 */
import { KeyObject, createPrivateKey, createPublicKey, hkdfSync, sign, verify, type webcrypto } from 'node:crypto';
import { GeneralEncrypt, exportJWK, flattenedDecrypt, generateKeyPair, importJWK, importSPKI, type JWK } from 'jose';
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

/** Recipients' public keys, imported once each: every job batch is sealed for the same few agents. */
const recipientKeys = new Map<string, KeyObject>();

function recipientKey(jwk: PublicJwk): KeyObject {
  const id = `${jwk.x}.${jwk.y}`;
  let key = recipientKeys.get(id);
  if (!key) {
    key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, format: 'jwk' });
    if (recipientKeys.size >= 10_000) recipientKeys.clear();
    recipientKeys.set(id, key);
  }
  return key;
}

/** One JWE readable by each recipient (one encrypted CEK per agent). */
export async function encryptSecrets(secrets: Record<string, unknown>, recipients: Recipient[]): Promise<GeneralJwe> {
  if (recipients.length === 0) throw new Error('no recipients for the device secrets');
  const jwe = new GeneralEncrypt(encoder.encode(JSON.stringify(secrets))).setProtectedHeader({ enc: SECRETS_ENC });
  for (const r of recipients) jwe.addRecipient(recipientKey(r.jwk)).setUnprotectedHeader({ alg: SECRETS_KEY_ALG, kid: r.kid });
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

/** The agent's private key, imported once: a KeyObject signs (node:crypto) and decrypts (jose) alike. */
export async function importAgentPrivateKey(jwk: JWK): Promise<{ sign: AnyKey; decrypt: AnyKey }> {
  const key = createPrivateKey({ key: jwk as never, format: 'jwk' });
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
    throw new Error('the agent key must be an EC key on curve P-256');
  return { sign: key, decrypt: key };
}

// ---- signatures -----------------------------------------------------------------------------
//
// Two forms travel, both JWS (RFC 7515):
//
// - compact: `header.payload.signature`, the payload base64url-encoded. The controller's job
//   batches and replies, and agents' heartbeats.
// - detached: `header..signature` + "\n" + the payload JSON as is. Agents' events and their
//   backup store requests (a results event carries configs, tens of KB each, which base64url
//   would grow by a third and cost a JS encode and decode on each side). The header holds
//   `b64: false` and `crit: ["b64"]` (RFC 7797: the payload is signed unencoded), the first line
//   is the compact serialization with detached content (RFC 7515 Appendix F), and the payload
//   follows the line break. JSON.stringify never writes a raw line break and base64url has none,
//   so the first "\n" ends the signature.
//
// verifyJson takes the form it expects (agent events: detached only); signerOf and
// unverifiedPayload read both.

// Both forms are made and checked with node:crypto one-shot sign/verify on KeyObjects imported
// once (importAgentPrivateKey, importAgentPublicKey, controllerKeyFromSecret): no WebCrypto
// promise and key import per message, and the payload is hashed straight from its string.
// The bytes on the wire are the JWS jose writes and reads (test/agents/signatures.test.ts
// checks both ways).

/** node:crypto's form of a JWS algorithm: digest, and raw r||s signatures as JWS wants (RFC 7518 §3.4). */
const ALGS: Record<string, { digest: string | null; ecdsa: boolean }> = {
  ES256: { digest: 'sha256', ecdsa: true },
  EdDSA: { digest: null, ecdsa: false },
};

function algOf(alg: string): { digest: string | null; ecdsa: boolean } {
  const known = ALGS[alg];
  if (!known) throw new Error(`unsupported JWS alg ${alg}`);
  return known;
}

/** A KeyObject for node:crypto, whether it came as one or as a WebCrypto key (kept per key). */
const asKeyObjects = new WeakMap<object, KeyObject>();
function keyObject(key: AnyKey): KeyObject {
  if (key instanceof KeyObject) return key;
  let hit = asKeyObjects.get(key);
  if (!hit) asKeyObjects.set(key, (hit = KeyObject.from(key)));
  return hit;
}

/** Protected headers as sent: one per signer and form, encoded once. */
const headerCache = new Map<string, string>();
function encodedHeader(header: Record<string, unknown>): string {
  const json = JSON.stringify(header);
  let encoded = headerCache.get(json);
  if (!encoded) {
    if (headerCache.size > 1000) headerCache.clear();
    headerCache.set(json, (encoded = Buffer.from(json).toString('base64url')));
  }
  return encoded;
}

function rawSign(alg: string, signingInput: Buffer, key: AnyKey): string {
  const { digest, ecdsa } = algOf(alg);
  const k = keyObject(key);
  return sign(digest, signingInput, ecdsa ? { key: k, dsaEncoding: 'ieee-p1363' } : k).toString('base64url');
}

function rawVerify(alg: string, signingInput: Buffer, signature: string, key: AnyKey): void {
  const { digest, ecdsa } = algOf(alg);
  const k = keyObject(key);
  const ok = verify(digest, signingInput, ecdsa ? { key: k, dsaEncoding: 'ieee-p1363' } : k, Buffer.from(signature, 'base64url'));
  if (!ok) throw new Error('signature verification failed');
}

/** Protected headers as received, parsed once (each signer sends the same one every time). */
const parsedHeaders = new Map<string, Record<string, unknown>>();
function parsedHeader(encoded: string): Record<string, unknown> {
  let header = parsedHeaders.get(encoded);
  if (!header) {
    const parsed: unknown = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('JWS protected header is not an object');
    header = parsed as Record<string, unknown>;
    if (parsedHeaders.size > 1000) parsedHeaders.clear();
    parsedHeaders.set(encoded, header);
  }
  return header;
}

/** The checks jose makes of a header: the expected alg, and only the `b64` extension, in the detached form only. */
function checkHeader(header: Record<string, unknown>, alg: string, detached: boolean): void {
  if (header.alg !== alg) throw new Error(`"alg" (Algorithm) Header Parameter value not allowed: ${String(header.alg)}`);
  if (detached) {
    const crit = header.crit;
    if (header.b64 !== false || !Array.isArray(crit) || crit.length !== 1 || crit[0] !== 'b64')
      throw new Error('a detached JWS must have b64: false and crit: ["b64"]');
  } else if (header.crit !== undefined || header.b64 !== undefined) {
    throw new Error('unsupported JWS header extension (crit or b64) in a compact JWS');
  }
}

/** Compact JWS over the JSON of `payload`; `kid` names the signer. */
export async function signJson(payload: unknown, key: AnyKey, alg: string, kid?: string): Promise<string> {
  const input = `${encodedHeader(kid ? { alg, kid } : { alg })}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${input}.${rawSign(alg, Buffer.from(input), key)}`;
}

/** JWS with the JSON of `payload` unencoded and detached (RFC 7797), sent after a line break. */
export async function signJsonDetached(payload: unknown, key: AnyKey, alg: string, kid?: string): Promise<string> {
  return signTextDetached(JSON.stringify(payload), key, alg, kid);
}

/** signJsonDetached of a payload already serialized (`json` must be the JSON text of one value). */
export function signTextDetached(json: string, key: AnyKey, alg: string, kid?: string): string {
  const header = encodedHeader(kid ? { alg, kid, b64: false, crit: ['b64'] } : { alg, b64: false, crit: ['b64'] });
  // RFC 7797: the signing input is the encoded header, a dot and the payload's bytes as they are.
  return `${header}..${rawSign(alg, Buffer.from(`${header}.${json}`), key)}\n${json}`;
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
    const kid = parsedHeader(token.slice(0, dot)).kid;
    return typeof kid === 'string' ? kid : null;
  } catch {
    return null;
  }
}

/**
 * Checks the signature of a JWS against `key` and answers the parsed payload. `form`: the
 * serialization accepted (agent events are detached only).
 */
export async function verifyJson(token: string, key: AnyKey, alg: string, form: 'any' | 'detached' = 'any'): Promise<unknown> {
  const detached = detachedParts(token);
  if (!detached) {
    if (form === 'detached') throw new Error('expected a JWS with a detached payload');
    const first = token.indexOf('.');
    const second = token.indexOf('.', first + 1);
    if (first <= 0 || second < 0 || token.indexOf('.', second + 1) >= 0) throw new Error('malformed compact JWS');
    checkHeader(parsedHeader(token.slice(0, first)), alg, false);
    rawVerify(alg, Buffer.from(token.slice(0, second)), token.slice(second + 1), key);
    return JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString('utf8'));
  }
  checkHeader(parsedHeader(detached.protectedHeader), alg, true);
  rawVerify(alg, Buffer.from(`${detached.protectedHeader}.${detached.payload}`), detached.signature, key);
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
  return createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y }, format: 'jwk' });
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

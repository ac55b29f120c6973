import 'reflect-metadata'; // @peculiar/x509 resolves its ASN.1 providers through tsyringe
import { webcrypto } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import type { ControllerConfig } from '../config';

x509.cryptoProvider.set(webcrypto as never);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

export interface CertificateAuthority {
  certPem: string;
  keyPem: string;
}

function toPem(der: ArrayBuffer, label: string): string {
  const b64 = Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .trim();
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

async function importKey(pem: string): Promise<CryptoKey> {
  const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  return webcrypto.subtle.importKey('pkcs8', der, ALG, true, ['sign']) as Promise<CryptoKey>;
}

/**
 * The service's own CA: taken from SWITCHBOARD_TLS_CA_CERT / SWITCHBOARD_TLS_CA_KEY (files,
 * `config.tlsCa`) when set, so several controllers share one; otherwise generated into the
 * data dir once.
 */
export async function loadOrCreateCa(config: Pick<ControllerConfig, 'dataDir' | 'tlsCa'>): Promise<CertificateAuthority> {
  if (config.tlsCa) {
    return { certPem: readFileSync(config.tlsCa.certFile, 'utf8'), keyPem: readFileSync(config.tlsCa.keyFile, 'utf8') };
  }
  const dataDir = config.dataDir;
  const dir = join(dataDir, 'tls');
  const certFile = join(dir, 'ca.crt');
  const keyFile = join(dir, 'ca.key');
  if (existsSync(certFile) && existsSync(keyFile)) {
    return { certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') };
  }
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Date.now().toString(16),
    name: 'CN=Switchboard CA, O=Switchboard',
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: new Date(Date.now() + 3650 * DAY_MS),
    keys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const ca = { certPem: cert.toString('pem') + '\n', keyPem: toPem(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY') };
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(keyFile, ca.keyPem, { mode: 0o600 });
  writeFileSync(certFile, ca.certPem, { mode: 0o644 });
  return ca;
}

/** A server certificate for the given names and addresses, signed by the CA. */
export async function issueServerCertificate(ca: CertificateAuthority, names: string[]): Promise<{ cert: string; key: string }> {
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await importKey(ca.keyPem);
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const isIp = (name: string) => /^[\d.]+$|:/.test(name);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: (Date.now() + 1).toString(16),
    subject: `CN=${names[0]}`,
    issuer: caCert.subject,
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: new Date(Date.now() + 397 * DAY_MS),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names.map((name) => ({ type: isIp(name) ? 'ip' : 'dns', value: name }))),
    ],
  });
  return { cert: cert.toString('pem') + '\n' + ca.certPem, key: toPem(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY') };
}

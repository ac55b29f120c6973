import { X509Certificate } from 'node:crypto';
import { appError } from '../errors/app-error';

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * A profile's ca_certificate as stored: its PEM certificates, each parsed (X509Certificate), one
 * per line block. Anything else (a key, text around the blocks, a broken block) is refused with
 * a 400 that says what was wrong.
 */
export function checkedCaCertificate(pem: string): string {
  const blocks = pem.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0)
    throw appError('PROFILE_INVALID_CA_CERTIFICATE', 'ca_certificate must be one or more PEM certificates (-----BEGIN CERTIFICATE----- …)');
  if (pem.replace(PEM_BLOCK, '').trim() !== '')
    throw appError(
      'PROFILE_INVALID_CA_CERTIFICATE',
      'ca_certificate holds text other than PEM certificates (a private key?); send the certificates only',
    );
  blocks.forEach((block, i) => {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(block);
    } catch (err) {
      throw appError('PROFILE_INVALID_CA_CERTIFICATE', `ca_certificate: certificate ${i + 1} cannot be read (${(err as Error).message})`);
    }
    if (!cert.ca)
      throw appError(
        'PROFILE_INVALID_CA_CERTIFICATE',
        `ca_certificate: certificate ${i + 1} (${cert.subject.replace(/\n/g, ', ')}) is not a CA certificate; send the CA that signed the device's certificate`,
      );
  });
  return `${blocks.join('\n')}\n`;
}

/**
 * Trust on first use for the gNMI server's TLS certificate, the TLS twin of ../ssh/host-key.ts.
 *
 * grpc-js hands `checkServerIdentity` to Node's tls.connect, which calls it only once the chain
 * has verified: with gnmi_skip_verify (rejectUnauthorized false) and a self-signed certificate it
 * is never called (test/drivers/gnmi.test.ts shows both). So the check wraps the credentials'
 * secure connector instead: every TLS session grpc-js opens (the first and any reconnect) is
 * checked right after its handshake, before grpc-js builds the HTTP/2 session on it, so no RPC and
 * no username/password metadata reaches a server whose certificate is not the pinned one.
 * Verification of the chain (when gnmi_skip_verify is off) stays with grpc-js / Node as before.
 */
import { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { DriverError, type GnmiCert } from '../types';

/**
 * What the driver reports (and the controller pins) for one DER certificate; `sha256` as
 * `openssl x509 -noout -fingerprint -sha256` prints it.
 */
export function describeCert(der: Buffer): GnmiCert {
  const x = new X509Certificate(der);
  const notAfter = new Date(x.validTo);
  return {
    sha256: x.fingerprint256,
    subject: x.subject.split('\n').join(', ').slice(0, 512),
    not_after: Number.isNaN(notAfter.getTime()) ? null : notAfter.toISOString(),
  };
}

export interface CertPin {
  /** Wraps TLS channel credentials so each TLS session is checked before HTTP/2 starts on it. */
  wrap(inner: grpc.ChannelCredentials): grpc.ChannelCredentials;
  /** The certificate of the session's first TLS connection (undefined until one was made). */
  readonly seen: GnmiCert | undefined;
  /** Set when the server presented a certificate other than the pinned one. */
  readonly mismatch: DriverError | undefined;
}

/**
 * The pin check of one driver session. With a pin, every TLS session must present that
 * certificate; without one, the first certificate seen is reported and later reconnects of the
 * same session must present it too.
 */
export function certPin(name: string, where: string, pinned: string | null | undefined): CertPin {
  let seen: GnmiCert | undefined;
  let mismatch: DriverError | undefined;
  const expected = (): string | undefined => pinned ?? seen?.sha256;

  const check = (socket: TLSSocket): DriverError | undefined => {
    const peer = socket.getPeerCertificate?.();
    if (!peer || !peer.raw) return new DriverError('protocol', `gNMI on ${where}: the TLS server sent no certificate`);
    const cert = describeCert(peer.raw);
    const want = expected();
    if (want && want !== cert.sha256) {
      // "certificate:" then the words: the config area masks the word after "key " in stored errors.
      mismatch = new DriverError(
        'hostkey',
        `gNMI certificate: mismatch for ${name} (${where}): expected SHA-256 ${want}, device presented ${cert.sha256} (${cert.subject || 'no subject'}). ` +
          "If the device's certificate was replaced, clear the pinned certificate: DELETE /api/devices/:id/gnmi-certificate",
      );
      return mismatch;
    }
    seen ??= cert;
    return undefined;
  };

  return {
    wrap: (inner) => new PinnedCredentials(inner, check),
    get seen() {
      return seen;
    },
    get mismatch() {
      return mismatch;
    },
  };
}

type SecureConnector = ReturnType<grpc.ChannelCredentials['_createSecureConnector']>;

/** Delegates to the wrapped TLS credentials and checks each TLS session they open. */
class PinnedCredentials extends grpc.ChannelCredentials {
  constructor(
    private readonly inner: grpc.ChannelCredentials,
    private readonly check: (socket: TLSSocket) => Error | undefined,
  ) {
    super();
  }

  _isSecure(): boolean {
    return true;
  }

  /** Never equal to another: grpc-js shares subchannels only between equal credentials. */
  _equals(other: grpc.ChannelCredentials): boolean {
    return other === this;
  }

  _createSecureConnector(...args: Parameters<grpc.ChannelCredentials['_createSecureConnector']>): SecureConnector {
    const connector = this.inner._createSecureConnector(...args);
    return {
      connect: async (socket) => {
        const result = await connector.connect(socket);
        const refused = result.secure ? this.check(result.socket as TLSSocket) : new Error('gNMI TLS credentials made a plaintext connection');
        if (refused) {
          result.socket.destroy();
          throw refused;
        }
        return result;
      },
      waitForReady: () => connector.waitForReady(),
      getCallCredentials: () => connector.getCallCredentials(),
      destroy: () => connector.destroy(),
    };
  }
}

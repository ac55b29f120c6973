/**
 * The device values both sides of a job use, declared once: how a device is reached
 * (`Transport`), what a configuration is (`FetchedConfig`), the login material an agent opens
 * from a job (`DeviceCredentials`) and the identities a device is pinned by (SSH host key, gNMI
 * TLS certificate). TypeBox schemas where a value crosses the wire, so the type and its check
 * are one thing.
 */
import { Type, type Static } from '@sinclair/typebox';

export const TransportSchema = Type.Union([Type.Literal('ssh'), Type.Literal('netconf'), Type.Literal('gnmi')]);
export type Transport = Static<typeof TransportSchema>;

/** The transports of structured (model-driven) configuration: a profile's automation transport. */
export const StructuredTransportSchema = Type.Union([Type.Literal('gnmi'), Type.Literal('netconf')]);
export type StructuredTransport = Static<typeof StructuredTransportSchema>;

export const ConfigFormatSchema = Type.Union([Type.Literal('cli'), Type.Literal('xml'), Type.Literal('json')]);
export type ConfigFormat = Static<typeof ConfigFormatSchema>;

export const EditOperationSchema = Type.Union([Type.Literal('replace'), Type.Literal('merge'), Type.Literal('delete')]);
export type EditOperation = Static<typeof EditOperationSchema>;

/** A configuration as a driver fetched it. */
export const FetchedConfigSchema = Type.Object({
  text: Type.String(),
  format: ConfigFormatSchema,
  via: TransportSchema,
});
export type FetchedConfig = Static<typeof FetchedConfigSchema>;

/** A DriverError's cause class, reported with a failed step (see agent/src/drivers/types.ts). */
export const ErrorCauseSchema = Type.String({ maxLength: 32 });

/**
 * A device's login material as the agent opens it from a job (the controller seals the secrets
 * to the pool's agents; a secret the profile does not have is absent). Never logged or returned.
 */
export interface DeviceCredentials {
  username: string;
  password?: string;
  private_key?: string;
  enable_password?: string;
}

const Iso = Type.String({ minLength: 10, maxLength: 40 });

/** An SSH host key as OpenSSH shows it: key type and `SHA256:` + unpadded base64 fingerprint. */
export const SshHostKey = Type.Object({
  type: Type.String({ minLength: 1, maxLength: 64 }),
  fingerprint: Type.String({ pattern: '^SHA256:[A-Za-z0-9+/]{43}$' }),
});
export type SshHostKey = Static<typeof SshHostKey>;

/** SHA-256 of a DER certificate, as `openssl x509 -fingerprint -sha256` prints it. */
export const CertSha256 = Type.String({ pattern: '^([0-9A-F]{2}:){31}[0-9A-F]{2}$' });

/** A gNMI server's TLS certificate as the agent saw it; not_after null when it could not be read. */
export const GnmiCert = Type.Object({
  sha256: CertSha256,
  subject: Type.String({ maxLength: 512 }),
  not_after: Type.Union([Iso, Type.Null()]),
});
export type GnmiCert = Static<typeof GnmiCert>;

/**
 * OpenSSH key revocation lists (PROTOCOL.krl in the OpenSSH sources), the format sshd reads from
 * RevokedKeys. Only what the CA needs: one certificates section revoking serials of one CA key.
 */
const MAGIC = Buffer.from('SSHKRL\n\0', 'latin1');
const FORMAT_VERSION = 1;
const SECTION_CERTIFICATES = 1;
const CERT_SERIAL_LIST = 0x20;

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const u64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(n);
  return b;
};
/** An SSH wire "string": uint32 length, then the bytes. */
const str = (bytes: Buffer) => Buffer.concat([u32(bytes.length), bytes]);

export interface KrlInput {
  /** The CA public key in SSH wire format (RFC 4253 blob). */
  caKey: Buffer;
  /** Serials of revoked certificates signed by that CA; each nonzero. */
  serials: bigint[];
  /** Grows each time the list changes (sshd does not compare it; people and tools do). */
  version: bigint;
  generatedAt: Date;
  comment: string;
}

export function encodeKrl(krl: KrlInput): Buffer {
  const header = Buffer.concat([
    MAGIC,
    u32(FORMAT_VERSION),
    u64(krl.version),
    u64(BigInt(Math.floor(krl.generatedAt.getTime() / 1000))),
    u64(0n), // flags: none defined
    str(Buffer.alloc(0)), // reserved
    str(Buffer.from(krl.comment, 'utf8')),
  ]);
  if (krl.serials.length === 0) return header;
  const serials = [...new Set(krl.serials)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const certificates = Buffer.concat([
    str(krl.caKey),
    str(Buffer.alloc(0)), // reserved
    Buffer.from([CERT_SERIAL_LIST]),
    str(Buffer.concat(serials.map(u64))),
  ]);
  return Buffer.concat([header, Buffer.from([SECTION_CERTIFICATES]), str(certificates)]);
}

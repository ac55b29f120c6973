/**
 * Masks secrets in a session transcript before it is stored. Drivers already mask the
 * credentials they send; this is the second line: the device's own credentials wherever they
 * appear, and the secret values of config lines a device echoes (passwords, keys, communities).
 */
export const MASK = '********';

// keyword [type digit] value on one line — e.g. "enable secret 5 $1$abc", "snmp-server community public RO",
// "pre-shared-key 0 s3cret", "authentication-key \"$9$x\"", "set system root-authentication encrypted-password ...".
// Never a key fingerprint ("host key SHA256:…" in our own session notes): it is public, and pinned
// keys are checked by it.
const CONFIG_SECRET = new RegExp(
  String.raw`\b(password|secret|passwd|key-string|pre-shared-key|authentication-key|auth-key|md5|community|encrypted-password|shared-secret|key|psk)` +
    String.raw`([ \t]+(?:\d{1,2}|encrypted|hidden|cipher|sha512|md5)?)?([ \t]+)(?!SHA256:)("[^"\n]*"|\S+)`,
  'gi',
);

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function maskSecrets(text: string, secrets: Array<string | null | undefined>): string {
  let out = text;
  // Longest first, so a secret containing another is masked whole.
  const known = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 3).sort((a, b) => b.length - a.length);
  for (const secret of known) {
    out = out.replace(new RegExp(escapeRegExp(secret), 'g'), MASK);
    // Private keys may be echoed with different line endings.
    if (secret.includes('\n')) out = out.replace(new RegExp(escapeRegExp(secret.replace(/\n/g, '\r\n')), 'g'), MASK);
  }
  return out.replace(CONFIG_SECRET, (_all, keyword: string, kind: string | undefined, space: string) => `${keyword}${kind ?? ''}${space}${MASK}`);
}

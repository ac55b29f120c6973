/**
 * Masks the device's own secrets inside a stored configuration when it is shown or diffed:
 * enable secrets, user password hashes, SNMP communities, TACACS/RADIUS keys, routing-protocol
 * passwords, pre-shared keys. Each value becomes `<secret:xxxxxxxx>`, the first 8 hex digits of
 * a keyed HMAC of the value: the same value always gives the same mask (a diff still shows that
 * a secret changed), and nothing about the value can be recovered without the key.
 *
 * The stored text stays raw (restore and rollback push it back); callers with configs.secrets
 * can ask for it with ?reveal=true.
 */
import { createHmac } from 'node:crypto';

export type SecretMasker = (value: string) => string;

/** The masker for one key: `<secret:` + 8 hex of HMAC-SHA256(key, value) + `>`. */
export function secretMasker(key: Buffer): SecretMasker {
  return (value) => `<secret:${createHmac('sha256', key).update(value).digest('hex').slice(0, 8)}>`;
}

/**
 * CLI rules: each matches what precedes a secret value (kept as is); the value after it (a quoted
 * string, or one word) is masked. Applied per line.
 */

// An optional encryption type or algorithm between a keyword and its value: "7", "5", "sha512",
// "0x", "ascii-text", "hidden" …
const KIND = String.raw`(?:(?:\d{1,2}|sha512|sha256|md5|encrypted|hidden|cipher|ascii-text|hexadecimal|unencrypted|clear|plain-text)\s+)?`;

/** Cisco-like CLIs (IOS, IOS-XE, IOS-XR, NX-OS, EOS): keyword lines. */
const CISCO_LIKE = [
  String.raw`^\s*enable\s+(?:secret|password)\s+(?:level\s+\d+\s+)?${KIND}`,
  String.raw`^\s*username\s+\S+(?:\s+privilege\s+\d+)?(?:\s+role\s+\S+)?\s+(?:secret|password)\s+${KIND}`,
  String.raw`^\s*snmp-server\s+community\s+`,
  String.raw`^\s*snmp-server\s+user\b.*?\sauth\s+(?:md5|sha\d*)\s+`,
  String.raw`^\s*snmp-server\s+user\b.*?\spriv\s+(?:(?:aes-?\d*|des|3des)(?:\s+\d+)?\s+)?`,
  String.raw`^\s*(?:tacacs-server|radius-server)\s+(?:host\s+\S+\s+)?key\s+${KIND}`,
  String.raw`^\s*(?:server-)?key\s+[067]\s+`,
  String.raw`\bneighbor\s+\S+\s+password\s+${KIND}`,
  String.raw`\bip\s+ospf\s+authentication-key\s+${KIND}`,
  String.raw`\bip\s+ospf\s+message-digest-key\s+\d+\s+md5\s+${KIND}`,
  String.raw`\bkey-string\s+${KIND}`,
  String.raw`\bcrypto\s+isakmp\s+key\s+${KIND}`,
  String.raw`\bpre-shared-key\s+(?:local\s+|remote\s+)?${KIND}`,
  String.raw`\bwpa-psk\s+ascii\s+${KIND}`,
  String.raw`^\s*password\s+${KIND}`,
  // IOS-XR: `username admin` then an indented ` secret 10 $6$…`.
  String.raw`^\s+secret\s+${KIND}`,
];

/** Junos (curly braces and `set` lines alike): the keyword then the value. */
const JUNOS = [
  String.raw`\bencrypted-password\s+`,
  String.raw`\b(?:secret|authentication-key|simple-password|pre-shared-key\s+(?:ascii-text|hexadecimal))\s+`,
  String.raw`\bsnmp\s+community\s+`,
  String.raw`^\s*community\s+(?=\S+\s*\{)`,
  String.raw`\bmd5\s+\d+\s+key\s+`,
];

/** PAN-OS `set` lines. */
const PANOS = [
  String.raw`\b(?:phash|password-hash)\s+`,
  String.raw`\bpre-shared-key\s+key\s+`,
  String.raw`\b(?:snmp-community-string|community-string|secret|auth-password|priv-password|authpwd|privpwd)\s+`,
  String.raw`\bset\s+mgt-config\s+users\s+\S+\s+password\s+`,
];

/** FortiOS `set` lines inside `config` blocks. */
const FORTIOS = [String.raw`^\s*set\s+(?:password|passwd|psksecret|secret|key|auth-password|priv-password)\s+(?:ENC\s+)?`];

const VALUE = String.raw`("[^"\n]*"|[^\s;{}]+)`;

function compile(rules: string[]): RegExp[] {
  return rules.map((before) => new RegExp(`(${before})${VALUE}`, 'gim'));
}

const DIALECTS = {
  cisco: compile(CISCO_LIKE),
  junos: compile(JUNOS),
  panos: compile(PANOS),
  fortios: compile(FORTIOS),
};

/** The rule sets of a device type: its own dialect's; every one when the dialect is unknown. */
function cliRules(deviceType: string | null | undefined): RegExp[] {
  const type = (deviceType ?? '').toLowerCase();
  if (/junos|juniper/.test(type)) return DIALECTS.junos;
  if (/pan|palo/.test(type)) return DIALECTS.panos;
  if (/forti|_fw$/.test(type)) return DIALECTS.fortios;
  if (/ios|_xe|_xr|nxos|nx-os|eos|arista|cisco/.test(type)) return DIALECTS.cisco;
  return Object.values(DIALECTS).flat();
}

/** The value with its quotes kept, its content masked. */
function maskValue(raw: string, mask: SecretMasker): string {
  if (raw.startsWith('<secret:')) return raw;
  if (raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"')) return `"${mask(raw.slice(1, -1))}"`;
  return mask(raw);
}

function maskCli(text: string, deviceType: string | null | undefined, mask: SecretMasker): string {
  let out = text;
  for (const rule of cliRules(deviceType)) out = out.replace(rule, (_all, before: string, value: string) => `${before}${maskValue(value, mask)}`);
  return out;
}

// XML elements (NETCONF Junos, PAN-OS) and JSON keys (gNMI OpenConfig) whose value is a secret.
const SECRET_NAMES = `(?:[\\w-]*:)?(?:${[
  'phash',
  'password',
  'encrypted-password',
  'password-hashed',
  'auth-password',
  'priv-password',
  'secret',
  'secret-key',
  'authentication-key',
  'simple-password',
  'pre-shared-key',
  'key-string',
  'community-string',
  'community-name',
  'shared-secret',
  'auth-key',
  'psk',
].join('|')})`;
const XML_ELEMENT = new RegExp(String.raw`(<(${SECRET_NAMES})(?:\s[^>]*)?>)([^<]+)(</\2>)`, 'g');
// Junos: <community><name>public</name>; PAN-OS v2c: <community-string> is above.
const XML_COMMUNITY = /(<community>\s*<name>)([^<]+)(<\/name>)/g;
const JSON_KEY = new RegExp(String.raw`("${SECRET_NAMES}"\s*:\s*)"((?:[^"\\\n]|\\.)*)"`, 'g');
const JSON_COMMUNITY = /("(?:[\w-]*:)?community"\s*:\s*)"((?:[^"\\\n]|\\.)*)"/g;

function maskXml(text: string, mask: SecretMasker): string {
  return text
    .replace(XML_ELEMENT, (_all, open: string, _name: string, value: string, close: string) =>
      value.trim() ? `${open}${maskValue(value, mask)}${close}` : _all,
    )
    .replace(XML_COMMUNITY, (_all, open: string, value: string, close: string) => `${open}${maskValue(value, mask)}${close}`);
}

function maskJson(text: string, mask: SecretMasker): string {
  const replace = (_all: string, key: string, value: string) => (value.startsWith('<secret:') ? _all : `${key}"${mask(value)}"`);
  return text.replace(JSON_KEY, replace).replace(JSON_COMMUNITY, replace);
}

/**
 * The config with every secret value masked. cli text is read in the device type's dialect;
 * xml and json by element and key names (CLI rules too, for a CLI config stored as text).
 */
export function maskConfigSecrets(text: string, format: string, deviceType: string | null | undefined, mask: SecretMasker): string {
  if (!text) return text;
  if (format === 'xml') return maskXml(text, mask);
  if (format === 'json') return maskJson(text, mask);
  return maskCli(text, deviceType, mask);
}

/** A unified diff with each line's text masked (its leading -, + or space kept). */
export function maskDiffSecrets(diff: string, format: string, deviceType: string | null | undefined, mask: SecretMasker): string {
  if (!diff) return diff;
  return diff
    .split('\n')
    .map((line) => (line.startsWith('@@') ? line : line.slice(0, 1) + maskConfigSecrets(line.slice(1), format, deviceType, mask)))
    .join('\n');
}

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
import { replaceBlocks } from './config-blocks';

export type SecretMasker = (value: string) => string;

/** The masker for one key: `<secret:` + 8 hex of HMAC-SHA256(key, value) + `>`. */
export function secretMasker(key: Buffer): SecretMasker {
  return (value) => `<secret:${createHmac('sha256', key).update(value).digest('hex').slice(0, 8)}>`;
}

/**
 * What the device's own credentials (its profile's password, private key and enable password)
 * become wherever they appear. They get no keyed mask: nothing about them is worth comparing.
 */
export const MASK = '********';
/** Any mask in masked text: a value's keyed mask or the credentials' stars. */
const MASKS = /<secret:[0-9a-f]{8}>|\*{8}/;

/**
 * CLI rules: each matches what precedes a secret value (kept as is); the value after it (a quoted
 * string, or one word) is masked. A rule given as [before, value] has a value pattern of its own.
 * Applied with the m flag, so ^ is the start of a line.
 *
 * They run over text a device sent (up to 32 MiB; short texts on the controller's event loop, long
 * ones in the mask pool's workers within a time limit, mask-pool.ts), so each must stay linear in
 * it: no two quantifiers that can trade the same characters (`\S+\b.*?`), and no unanchored start
 * whose failing attempt rescans what the next start scans again (test/configs/mask-linear.test.ts).
 */
type CliRule = string | [before: string, value: string];

// `********` where a type word was: transcripts stored by older releases, whose keyword pass masked
// the word after `psk`, `key`, `password` …, type or value (`wpa-psk ******** 0 <key>`). They are
// masked again as they are read, so the rules take it for the type it replaced.
const WAS = String.raw`\*{8}`;
// An optional encryption type or algorithm between a keyword and its value: "7", "5", "sha512",
// "0x", "ascii-text", "hidden" …
const KIND = String.raw`(?:(?:\d{1,2}|sha512|sha256|md5|encrypted|hidden|cipher|ascii-text|hexadecimal|unencrypted|clear|plain-text|${WAS})\s+)?`;
// A value: a quoted string (on one line), or one word.
const VALUE = String.raw`("[^"\n]*"|[^\s;{}]+)`;
// SNMPv3 and NTP authentication algorithms: md5, sha, sha1, sha256, sha-256, sha512, hmac-sha1 …
const AUTH_ALG = String.raw`(?:md5|sha[-\d]*|hmac-sha[-\d]*|cmac-aes-128|${WAS})`;

// An LDAP server's bind: its password comes later on the line.
const LDAP_BIND = String.raw`\b(?:ldap-server\s+host|bind\s+authenticate)\b`;

/** Every CLI dialect: values no keyword needs to announce. */
const ANY_CLI: CliRule[] = [
  // crypt(3)-style hashes and Junos `$9$` (reversible) secrets, whatever keyword comes before:
  // $1$ md5, $5$ sha256, $6$ sha512, $8$ / $9$ Cisco pbkdf2 / scrypt, $y$ yescrypt, $2b$ bcrypt.
  String.raw`(?<=[\s=])(?="?\$(?:1|2[aby]?|5|6|8|9|y)\$)`,
  // The password of a URL (archive paths, copy targets, proxies): scheme://user:PASSWORD@host. The
  // scheme is checked behind each `://`, not tried from every word start: on `a-a-a-…` each start
  // rescanned the run to its end.
  [String.raw`://(?<=(?<!\w)[a-z][a-z0-9+.-]*://)[^\s:/@"]+:`, String.raw`([^\s@/"]+)(?=@)`],
];

/** Cisco-like CLIs (IOS, IOS-XE, IOS-XR, NX-OS, EOS): keyword lines. */
const CISCO_LIKE: CliRule[] = [
  String.raw`^\s*enable\s+(?:secret|password)\s+(?:level\s+\d+\s+)?${KIND}`,
  // IOS `username u privilege 15 secret 9 …`, NX-OS `username u password 5 … role r`, EOS `username u role r secret sha512 …`.
  // The name has a word character (a lookahead: `\S+\b.*?` retried the rest of the line from each word boundary in it).
  String.raw`^\s*username\s+(?=\S*\w).*?\s(?:secret|password)\s+${KIND}`,
  // EOS
  String.raw`^\s*aaa\s+root\s+secret\s+${KIND}`,
  // SNMP v1/v2c communities, also where a trap host names its community; v3 users' auth and priv keys.
  String.raw`^\s*snmp-server\s+community\s+`,
  String.raw`^\s*snmp-server\s+host\s+\S+(?:\s+vrf\s+\S+)?(?:\s+(?:informs|traps))?(?:\s+version\s+(?:1|2c))?\s+` +
    String.raw`(?!(?:version|informs|traps|vrf|use-vrf|source-interface|filter-vrf)\b)${KIND}`,
  String.raw`^\s*snmp-server\s+user\b.*?\sauth\s+${AUTH_ALG}\s+${KIND}`,
  String.raw`^\s*snmp-server\s+user\b.*?\spriv\s+(?:(?:aes(?:-?\d+|\s+(?:128|192|256))?|3des|des\d*)\s+)?${KIND}`,
  // TACACS+ / RADIUS: global, per host (`radius-server host X auth-port 1812 key 7 …`), and in
  // server blocks (` key 7 …`, XR ` key 7 …` under a host); never a key chain's ` key 1`. The host is
  // `\S.*?`: `\S+.*?` retried the rest of the line from each character of a host that had no key.
  String.raw`^\s*(?:tacacs-server|radius-server)\s+(?:host\s+\S.*?\s)?key\s+${KIND}`,
  String.raw`^\s*(?:server-)?key\s+(?!(?:chain|config-key)\b|\d+\s*$)${KIND}`,
  String.raw`\bserver-key\s+${KIND}`,
  // Routing protocols: BGP, OSPF (IOS, NX-OS, EOS interface forms; XR area/interface forms), IS-IS, key chains.
  String.raw`\bneighbor\s+\S+\s+password\s+${KIND}`,
  String.raw`^\s*(?:ip\s+ospf\s+|ipv6\s+ospf\s+|ospfv3\s+)?authentication-key\s+${KIND}`,
  String.raw`\bmessage-digest-key\s+\d+\s+${AUTH_ALG}\s+${KIND}`,
  String.raw`\b(?:isis\s+password|area-password|domain-password|lsp-password|hello-password)\s+(?:(?:hmac-md5|text)\s+)?${KIND}`,
  String.raw`\bauthentication\s+key\s+${KIND}`,
  String.raw`\bkey-string\s+(?:password\s+)?${KIND}`,
  String.raw`\bntp\s+authentication-key\s+\d+\s+${AUTH_ALG}\s+${KIND}`,
  // First-hop redundancy: HSRP / VRRP text authentication (`standby 1 authentication s3cret`).
  String.raw`\bauthentication\s+text\s+`,
  String.raw`\bstandby\s+(?:\d+\s+)?authentication\s+(?!(?:md5|text)\b)`,
  // PPP CHAP/PAP, FTP/HTTP client and LDAP bind passwords.
  String.raw`\bppp\s+(?:chap|ms-chap|ms-chap-v2|eap)\s+password\s+${KIND}`,
  String.raw`\bppp\s+pap\s+sent-username\s+\S+\s+password\s+${KIND}`,
  String.raw`\bip\s+(?:ftp|http\s+client)\s+password\s+${KIND}`,
  // Each bind looks for its password up to the next bind only, which looks on from there: the same
  // masking, without every bind of a long line scanning to the line's end (O(n²)).
  String.raw`${LDAP_BIND}(?:(?!${LDAP_BIND}).)*?\spassword\s+${KIND}`,
  // IKE / IPsec pre-shared keys: ISAKMP, keyrings (`pre-shared-key address X key …`), IKEv2 keyrings and profiles.
  String.raw`\bcrypto\s+isakmp\s+key\s+${KIND}`,
  String.raw`\bpre-shared-key\s+(?:address|hostname)\s+\S+(?:\s+\S+)?\s+key\s+${KIND}`,
  String.raw`\bpre-shared-key\s+(?!(?:address|hostname)\b)(?:local\s+|remote\s+)?${KIND}`,
  String.raw`\bpre-share\s+key\s+(?:local\s+|remote\s+)?${KIND}`,
  // Wireless: `wpa-psk ascii 0 …` (autonomous APs), `security wpa akm psk set-key ascii 0 …` (WLC).
  String.raw`\bwpa-psk\s+(?:ascii|hex|${WAS})\s+${KIND}`,
  String.raw`\bset-key\s+(?:ascii|hex|${WAS})\s+${KIND}`,
  // `password …` lines (vty, NX-OS BGP neighbors, XR users), indented `secret …` (IOS-XR users).
  String.raw`^\s*password\s+(?!(?:encryption|strength-check|minimum|policy|history)\b)${KIND}`,
  String.raw`^\s+secret\s+${KIND}`,
];

// Junos and PAN-OS write no type before a value: a Cisco-like `secret 5 <value>` or
// `authentication-key encrypted <value>` is left to the Cisco rules (a device of unknown type gets
// every dialect's rules, and the type must not be taken for the value).
const NOT_TYPED = String.raw`(?!(?:\d{1,2}|sha512|sha256|md5|encrypted|hidden|cipher|unencrypted|clear|plain-text|ENC)\s+\S)`;

/** Junos (curly braces and `set` lines alike): the keyword then the value. */
const JUNOS: CliRule[] = [
  String.raw`\bencrypted-password\s+`,
  // NTP keys: `authentication-key 1 type md5 value "$9$…"`.
  String.raw`\bauthentication-key\s+\d+\s+type\s+\S+\s+value\s+`,
  // RADIUS/TACACS+ and CHAP secrets, routing and SNMPv3 keys, PAP and LDAP passwords.
  String.raw`\b(?:secret|authentication-key(?!\s+\d+\s+type\b)|simple-password|privacy-key|authentication-password|privacy-password|` +
    String.raw`local-password|default-pap-password|bind-password)\s+${NOT_TYPED}`,
  String.raw`\b(?:pre-shared-key|key)\s+(?:ascii-text|hexadecimal)\s+`,
  String.raw`\bsnmp\s+community\s+`,
  // `community NAME { … }` and `community NAME;` (policy-options' `community NAME members …` is neither).
  String.raw`^\s*community\s+(?=[^\s;{]+\s*[{;])`,
  String.raw`\bmd5\s+\d+\s+key\s+`,
];

/** PAN-OS `set` lines. */
const PANOS: CliRule[] = [
  String.raw`\b(?:phash|password-hash)\s+`,
  String.raw`\bpre-shared-key\s+(?:key|${WAS})\s+`,
  String.raw`\b(?:snmp-community-string|community-string|secret|auth-password|priv-password|authpwd|privpwd|bind-password|passphrase|` +
    String.raw`private-key)\s+${NOT_TYPED}`,
  String.raw`\bset\s+mgt-config\s+users\s+\S+\s+password\s+`,
  // Any other password leaf (`… ospf auth-profile P password …`, server profiles).
  String.raw`^\s*set\s[^\n]*?(?<![\w-])password\s+`,
  String.raw`\bmd5\s+\d+\s+key\s+`,
];

// FortiOS quotes may span lines (`set private-key "-----BEGIN …`): the whole quoted value is masked.
const FORTIOS_VALUE = String.raw`("[^"]*"|[^\s;{}]+)`;

/** FortiOS `set` lines inside `config` blocks. */
const FORTIOS: CliRule[] = [
  [
    String.raw`^\s*set\s+(?:password|passwd|password2|psksecret|psksecret-remote|ppk-secret|secret|secondary-secret|tertiary-secret|key|` +
      String.raw`auth-password|priv-password|auth-pwd|priv-pwd|passphrase|sso-password|authentication-key|key-string|md5-key|private-key)\s+` +
      String.raw`(?:(?:ENC|${WAS})\s+)?`,
    FORTIOS_VALUE,
  ],
];

/**
 * Secrets only a block tells apart: an SNMP community's `set name` (FortiOS). `opening` starts the
 * block, which ends at the first `end` line of the opening's indentation (replaceBlocks).
 */
const FORTIOS_BLOCKS: Array<{ opening: RegExp; rules: RegExp[] }> = [
  { opening: /^([ \t]*)config\s+system\s+snmp\s+community\b/gm, rules: compile([[String.raw`^\s*set\s+name\s+`, FORTIOS_VALUE]]) },
];

/**
 * The rules as regular expressions: group 1 what is kept, group 2 the value. `\s` outside a
 * character class becomes a space or tab, so that no rule reaches onto the next line (a keyword
 * alone at the end of a line must not mask the first word of the next one).
 */
function compile(rules: CliRule[]): RegExp[] {
  return rules.map((rule) => {
    const [before, value] = typeof rule === 'string' ? [rule, VALUE] : rule;
    return new RegExp(`(${before.replace(/(?<!\[\^?)\\s/g, '[ \\t]')})${value}`, 'gim');
  });
}

interface Dialect {
  rules: RegExp[];
  blocks?: typeof FORTIOS_BLOCKS;
}

const DIALECTS: Record<string, Dialect> = {
  cisco: { rules: compile([...CISCO_LIKE, ...ANY_CLI]) },
  junos: { rules: compile([...JUNOS, ...ANY_CLI]) },
  panos: { rules: compile([...PANOS, ...ANY_CLI]) },
  fortios: { rules: compile([...FORTIOS, ...ANY_CLI]), blocks: FORTIOS_BLOCKS },
};
const EVERY_DIALECT: Dialect = {
  // The most specific first: FortiOS `set <keyword> ENC <value>` before PAN-OS's bare keywords.
  rules: compile([...FORTIOS, ...CISCO_LIKE, ...JUNOS, ...PANOS, ...ANY_CLI]),
  blocks: FORTIOS_BLOCKS,
};

/** The rule sets of a device type: its own dialect's; every one when the dialect is unknown. */
function dialectOf(deviceType: string | null | undefined): Dialect {
  const type = (deviceType ?? '').toLowerCase();
  if (/junos|juniper/.test(type)) return DIALECTS.junos;
  if (/pan|palo/.test(type)) return DIALECTS.panos;
  if (/forti|_fw$/.test(type)) return DIALECTS.fortios;
  if (/ios|_xe|_xr|nxos|nx-os|eos|arista|cisco/.test(type)) return DIALECTS.cisco;
  return EVERY_DIALECT;
}

/** A value that is a mask already: ours, or what a driver or the credentials pass put there. */
const MASKED = /^"?(?:<secret:[0-9a-f]{8}>|\*{3,})"?$/;

/**
 * The line breaks of a masked span, put back after its mask: masking never changes the number of
 * lines, so a diff's masked lines go back behind their markers by position.
 */
const breaksOf = (span: string) => span.match(/\r?\n/g)?.join('') ?? '';

/**
 * The value with its quotes and the whitespace around it kept (an XML element's text on lines of
 * its own), its content masked. A mask stands for the content alone, however it is laid out.
 */
function maskValue(raw: string, mask: SecretMasker): string {
  const core = raw.trim();
  if (!core || MASKED.test(core)) return raw;
  const start = raw.indexOf(core);
  const quoted = core.length >= 2 && core.startsWith('"') && core.endsWith('"');
  const masked = quoted ? `"${mask(core.slice(1, -1))}"` : mask(core);
  return raw.slice(0, start) + masked + breaksOf(core) + raw.slice(start + core.length);
}

function applyRules(text: string, rules: RegExp[], mask: SecretMasker): string {
  let out = text;
  for (const rule of rules) out = out.replace(rule, (_all, before: string, value: string) => `${before}${maskValue(value, mask)}`);
  return out;
}

function maskCli(text: string, deviceType: string | null | undefined, mask: SecretMasker): string {
  const dialect = dialectOf(deviceType);
  let out = applyRules(text, dialect.rules, mask);
  for (const { opening, rules } of dialect.blocks ?? []) out = replaceBlocks(out, opening, (block) => applyRules(block, rules, mask));
  return out;
}

// XML elements (NETCONF Junos, PAN-OS) and JSON keys (gNMI OpenConfig) whose value is a secret:
// any `…-password` / `…-secret` / `…authentication-key`, and these names.
const SECRET_NAMES = [
  String.raw`(?:[\w-]+-)?(?:password|secret|authentication-key)`,
  'phash',
  'password-hashed',
  'secret-key',
  'pre-shared-key',
  'key-string',
  'community-string',
  'community-name',
  'auth-key',
  'privacy-key',
  'authpwd',
  'privpwd',
  'psk',
  'wpa2-psk',
  'passphrase',
];
// In XML also a `<key>` with text (PAN-OS pre-shared-key/key, OSPF md5 key) and Junos key
// encodings (`<pre-shared-key><ascii-text>…`).
const XML_NAMES = `(?:[\\w-]*:)?(?:${[...SECRET_NAMES, 'key', 'ascii-text', 'hexadecimal'].join('|')})`;
const JSON_NAMES = `(?:[\\w-]*:)?(?:${SECRET_NAMES.join('|')})`;
// An opening tag's attributes hold no `<` (XML escapes it): an attribute scan that may cross one reaches
// the same `>` from every `<password ` before it, O(n²) on a run of them.
const XML_ELEMENT = new RegExp(String.raw`(<(${XML_NAMES})(?:\s[^<>]*)?>)([^<]+)(</\2>)`, 'g');
// A secret element cut by the edge of a stretch of config (a diff's hunk): its text from the start
// up to its closing tag, or from its opening tag to the end, the other tag outside the stretch.
const XML_CUT_OPEN = new RegExp(String.raw`^()([^<]+)(</${XML_NAMES}>)`);
const XML_CUT_CLOSE = new RegExp(String.raw`(<${XML_NAMES}(?:\s[^<>]*)?>)([^<]+)()$`);
// Junos: <community><name>public</name>; PAN-OS v2c: <community-string> is above.
const XML_COMMUNITY = /(<community>\s*<name>)([^<]+)(<\/name>)/g;
// Any element whose text is a crypt(3) hash or a Junos $9$ secret.
const XML_HASH = /(>)(\s*\$(?:1|2[aby]?|5|6|8|9|y)\$[^<]*)(<)/g;
const JSON_KEY = new RegExp(String.raw`("${JSON_NAMES}"\s*:\s*)"((?:[^"\\\n]|\\.)*)"`, 'g');
const JSON_COMMUNITY = /("(?:[\w-]*:)?community"\s*:\s*)"((?:[^"\\\n]|\\.)*)"/g;

function maskXml(text: string, mask: SecretMasker): string {
  const between = (_all: string, open: string, value: string, close: string) => `${open}${maskValue(value, mask)}${close}`;
  const elements = text
    .replace(XML_ELEMENT, (_all, open: string, _name: string, value: string, close: string) => between(_all, open, value, close))
    .replace(XML_COMMUNITY, between);
  // A hash's text ends at a `<`: after the last one no hash can, and each `>` there would scan to
  // the end of the text and fail (O(n²) on `> $1$ > $1$ …`), so that tail is left out.
  const tail = elements.lastIndexOf('<') + 1;
  const hashes = elements.slice(0, tail).replace(XML_HASH, between) + elements.slice(tail);
  return hashes.replace(XML_CUT_OPEN, between).replace(XML_CUT_CLOSE, between);
}

function maskJson(text: string, mask: SecretMasker): string {
  const replace = (_all: string, key: string, value: string) => (MASKED.test(value) ? _all : `${key}"${mask(value)}"`);
  return text.replace(JSON_KEY, replace).replace(JSON_COMMUNITY, replace);
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A line of a multi-line credential at least this long (spaces around it left out) is masked on
 * its own wherever it appears, like a credential: a dry-run diff's hunk may show only the middle
 * or the end of a private key or other multi-line secret, where the whole value never matches.
 */
const LINE_ANYWHERE = 8;
/**
 * A shorter line of one, from SHORT_LINE characters (a key's last, short body line), is masked
 * where it is a whole line of the text; shorter still it is shown, as a credential under 3
 * characters is (masking `!` or `}` wherever it stands would hide the config, not the secret).
 */
const SHORT_LINE = 3;

/**
 * The device's own credentials replaced with MASK wherever they appear, longest first (a secret
 * containing another is masked whole), never inside a `<secret:…>` already there. Each line of a
 * multi-line credential is a credential of its own too (LINE_ANYWHERE, SHORT_LINE).
 */
function maskCredentials(text: string, credentials: readonly string[]): string {
  const forms = new Set<string>();
  const wholeLines = new Set<string>();
  for (const secret of credentials) {
    if (secret.length < 3) continue;
    forms.add(secret);
    if (!/[\r\n]/.test(secret)) continue;
    // Private keys may be echoed with other line endings.
    forms.add(secret.replace(/\r?\n/g, '\r\n')).add(secret.replace(/\r\n/g, '\n'));
    for (const line of secret.split(/\r?\n|\r/)) {
      const core = line.trim();
      if (core.length >= LINE_ANYWHERE) forms.add(core);
      else if (core.length >= SHORT_LINE) wholeLines.add(core);
    }
  }
  if (forms.size === 0) return text;
  const longestFirst = (set: Set<string>) => [...set].sort((a, b) => b.length - a.length).map(escapeRegExp);
  const alternatives = longestFirst(forms);
  // `(?=\S)` first (each such line starts with one): the lookbehind is tried once per run of blanks,
  // not from each blank of it back to the line's start (O(n²) on a long blank line).
  if (wholeLines.size > 0) alternatives.push(String.raw`(?=\S)(?<=^[ \t]*)(?:${longestFirst(wholeLines).join('|')})(?=[ \t]*\r?$)`);
  const pattern = new RegExp(`(<secret:[0-9a-f]{8}>)|${alternatives.join('|')}`, 'gm');
  return text.replace(pattern, (all: string, kept: string | undefined) => kept ?? MASK + breaksOf(all));
}

/**
 * How text of a device is read:
 * - `cli`, `xml`, `json`: a stored config of that format (cli in the device type's dialect);
 * - `text`: anything else that can hold config or device output — a session transcript (CLI
 *   output, NETCONF XML, gNMI JSON, perhaps all three), an error, a log line — read every way.
 */
export type MaskFormat = 'cli' | 'xml' | 'json' | 'text';

/** How a device's text is masked: read as `format`, in the dialect of `deviceType`, with `mask`, and its own `credentials`. */
type MaskHow = [format: MaskFormat | string, deviceType: string | null | undefined, mask: SecretMasker, credentials?: readonly string[]];

/**
 * The one masking of device text, used by every route that shows it: stored configs and their
 * diffs, backup transcripts, backup errors. Each secret value the dialect's rules find becomes
 * `<secret:xxxxxxxx>`, then the device's own `credentials` (opened from its profile) become
 * `********` wherever they still appear. Masked text is left as it is, so masking twice is
 * masking once, and keeps its lines: a value spanning lines leaves its line breaks after its
 * mask. An unknown format is read as `text`.
 */
export function maskConfigSecrets(text: string, ...[format, deviceType, mask, credentials = []]: MaskHow): string {
  if (!text) return text;
  let out: string;
  if (format === 'xml') out = maskXml(text, mask);
  else if (format === 'json') out = maskJson(text, mask);
  else if (format === 'cli') out = maskCli(text, deviceType, mask);
  else out = maskCli(maskJson(maskXml(text, mask), mask), deviceType, mask);
  return maskCredentials(out, credentials);
}

/**
 * One device's text to mask, with everything maskConfigSecrets needs but the masker: the form in
 * which the mask pool sends it to a worker (mask-pool.ts).
 */
export interface DeviceText {
  text: string;
  /** How the text is read; a diff's hunk sides are read so (maskDiffSecrets). */
  format: MaskFormat | string;
  deviceType: string | null | undefined;
  /** The device's own credentials, opened from its profile. */
  credentials: readonly string[];
  /** The text is a unified diff of the device's configs. */
  diff?: boolean;
}

/**
 * A device's text masked: the one function the event loop and the mask pool's workers both run,
 * so a text gives the same bytes wherever it is masked.
 */
export function maskDeviceText({ text, format, deviceType, credentials, diff }: DeviceText, mask: SecretMasker): string {
  const maskText = (part: string) => maskConfigSecrets(part, format, deviceType, mask, credentials);
  return diff ? maskDiffSecrets(text, maskText) : maskText(text);
}

// A hunk header and its old and new line counts (1 when left out).
const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;

/**
 * A unified diff as shown, masked as text of its format rather than line by line: a hunk's old
 * side (context and removed lines) and its new side (context and added lines) are each a stretch
 * of their config, so each is masked as one text (an XML element, a JSON key or a block whose
 * secret spans lines is found as in the whole config) and its lines go back behind their markers.
 * `maskText` is the device's masker for the diff's format. `@@` and file headers stay as they are;
 * any other line outside a hunk (a diff unifiedDiff did not write) is masked alone.
 */
export function maskDiffSecrets(diff: string, maskText: (text: string) => string): string {
  if (!diff) return diff;
  const lines = diff.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const header = HUNK.exec(lines[i]);
    if (!header) {
      out.push(/^(?:@@|---|\+\+\+)/.test(lines[i]) ? lines[i] : lines[i].slice(0, 1) + maskText(lines[i].slice(1)));
      continue;
    }
    const end = hunkEnd(lines, i + 1, Number(header[1] ?? 1), Number(header[2] ?? 1));
    out.push(lines[i]);
    // One by one: a hunk of a few hundred thousand lines spread into push's arguments overflows the stack.
    for (const line of maskHunk(lines.slice(i + 1, end), maskText)) out.push(line);
    i = end - 1;
  }
  return out.join('\n');
}

/** Where a hunk's body, from `start`, ends: once its old and new line counts are read. */
function hunkEnd(lines: string[], start: number, oldCount: number, newCount: number): number {
  let [old, now, i] = [oldCount, newCount, start];
  for (; i < lines.length && (old > 0 || now > 0); i += 1) {
    const marker = lines[i].slice(0, 1);
    if (marker === '@') break;
    if (marker === '\\') continue; // "\ No newline at end of file"
    if (marker !== '+') old -= 1;
    if (marker !== '-') now -= 1;
  }
  return i;
}

/**
 * A hunk's lines, each side masked as one text. A context line is shown as the old side masked
 * it, or as the new side did if only that side masked it (a value may span into changed lines).
 */
function maskHunk(body: string[], maskText: (text: string) => string): string[] {
  const old = maskSide(body, '+', maskText);
  const now = maskSide(body, '-', maskText);
  return body.map((line, i) => {
    const marker = line.slice(0, 1);
    if (marker === '\\') return line;
    if (marker === '+') return marker + now.get(i)!;
    const shown = old.get(i)!;
    return marker === '-' ? marker + shown : marker + contextShown(line.slice(1), shown, now.get(i)!);
  });
}

/**
 * A context line as shown, from its old side's and its new side's masking. The two differ when a
 * masked value runs into changed lines (a key whose body changed): the same text masked, with
 * another mask. When the text around the masks differs too, each side hid something the other
 * shows (a secret running into the changed lines of one side only): the line is hidden whole.
 */
function contextShown(raw: string, before: string, after: string): string {
  if (before === after || after === raw) return before;
  if (before === raw) return after;
  const around = (masked: string) => masked.split(MASKS).join('\u0000');
  return around(before) === around(after) ? before : MASK;
}

/** One side of a hunk (every line but the other side's and notes) masked as one text: its lines by index. */
function maskSide(body: string[], otherMarker: string, maskText: (text: string) => string): Map<number, string> {
  const at = body.flatMap((line, i) => (line.startsWith(otherMarker) || line.startsWith('\\') ? [] : [i]));
  const lines = at.map((i) => body[i].slice(1));
  const masked = maskText(lines.join('\n')).split('\n');
  // Masking keeps lines (maskConfigSecrets); were a change ever to break that, the side is hidden, not shown unmasked.
  const shown = masked.length === lines.length ? masked.map((line, k) => maskKeyBody(line, lines[k - 1], lines[k + 1])) : lines.map(() => MASK);
  return new Map(at.map((i, k) => [i, shown[k]]));
}

/** A line that is all base64, as the body of a PEM key or certificate is; a full one is long. */
const KEY_BODY = /^(\s*)[A-Za-z0-9+/]{40,}={0,2}\s*$/;
const KEY_LAST = /^(\s*)[A-Za-z0-9+/]{4,}={0,2}\s*$/;
const PEM_END = /^\s*-----END [A-Z0-9 ]+-----/;
/**
 * Base64 mixes cases and digits; a word of config (`next`, `end`) does not. Three scans, not one
 * pattern: `[a-z].*[A-Z]` scanned the rest of the line from each lower-case letter.
 */
const encoded = (line: string) => /[0-9+/=]/.test(line) || (/[a-z]/.test(line) && /[A-Z]/.test(line));

/**
 * A hunk may show the middle of a multi-line key without its opening (one line of a long key
 * changed): no rule can tell it is a secret there, so a line that looks like a key's body is
 * hidden in a diff, whatever it is (a certificate's body is public; hiding it costs nothing).
 * So is a shorter base64 line right after such a line or right before a PEM end line: a key's
 * last body line.
 */
function maskKeyBody(line: string, before = '', after = ''): string {
  const last = () => (encoded(line) && (KEY_BODY.test(before) || PEM_END.test(after)) ? KEY_LAST.exec(line) : null);
  const body = KEY_BODY.exec(line) ?? last();
  return body ? body[1] + MASK : line;
}

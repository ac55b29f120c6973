/**
 * Masking runs on the controller's event loop over text a device sent (configs, transcripts, dry-run
 * diffs; an agent passes on answers up to 32 MiB), so its time must grow linearly with that text.
 * These tests assert no time (docs/testing.md): each input below made a pattern rescan the text from
 * every start, which took seconds at a fraction of these sizes and minutes at 1 MB; should one of
 * them come back, the test hangs past vitest's timeout, which is the failure. Each also checks the
 * masking of the input, secrets put around the pathological part included.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MASK, maskConfigSecrets, maskDiffSecrets, secretMasker } from '../../controller/src/configs/config-secrets';

const KEY = Buffer.alloc(32, 9);
const mask = secretMasker(KEY);
const m = (value: string) => `<secret:${createHmac('sha256', KEY).update(value).digest('hex').slice(0, 8)}>`;

const MB = 1 << 20;
/** `unit` repeated to about `size` characters. */
const pump = (unit: string, size = MB) => unit.repeat(Math.ceil(size / unit.length));

/** Every dialect's rules: a type none matches gets all of them. */
const DEVICE_TYPES = ['vendor_ios', 'vendor_xr', 'vendor_nxos', 'vendor_eos', 'vendor_junos', 'vendor_panos', 'vendor_fw', 'generic'];
const CISCO_RULES = ['vendor_ios', 'vendor_nxos', 'vendor_eos', 'generic'];
const FORTIOS_RULES = ['vendor_fw', 'generic'];

describe('a URL password on a 1 MB line of scheme characters', () => {
  // Each `a` of `a-a-a-…` started a scheme that ran to the end of the line (18 s at 200 KB).
  it.each(DEVICE_TYPES)('%s', (deviceType) => {
    const line = pump('a-');
    const text = ['hostname r1', line, ' path ftp://backup:UrlPw@192.0.2.20/cfg', `${line}ftp://u:TailPw@h`].join('\n');
    const expected = ['hostname r1', line, ` path ftp://backup:${m('UrlPw')}@192.0.2.20/cfg`, `${line}ftp://u:${m('TailPw')}@h`].join('\n');
    expect(maskConfigSecrets(text, 'cli', deviceType, mask)).toBe(expected);
    expect(maskConfigSecrets(text, 'text', deviceType, mask)).toBe(expected);
  });

  it('finds the scheme where it starts: after a word boundary, never inside a word', () => {
    const lines = ['x-http://u:P1@h', '-http://u:P2@h', '.svn+ssh://u:P3@h', 'my_http://u:Shown@h', '9ftp://u:Shown2@h'];
    expect(maskConfigSecrets(lines.join('\n'), 'cli', 'generic', mask).split('\n')).toEqual([
      `x-http://u:${m('P1')}@h`,
      `-http://u:${m('P2')}@h`,
      `.svn+ssh://u:${m('P3')}@h`,
      'my_http://u:Shown@h',
      '9ftp://u:Shown2@h',
    ]);
  });
});

describe('FortiOS SNMP community blocks', () => {
  const closed = ['config system snmp community', '    edit 1', '        set name "CommPw"', '    next', 'end'];
  const maskedBlock = closed.map((line) => line.replace('"CommPw"', `"${m('CommPw')}"`));

  // Each opening with no `end` scanned to the end of the text (5–6 s for 20,000).
  it.each(FORTIOS_RULES)('%s: 50,000 openings with no end, after a closed block', (deviceType) => {
    const openings = 'config system snmp community\n'.repeat(50_000);
    const text = [...closed, openings + 'set name Visible'].join('\n');
    expect(maskConfigSecrets(text, 'cli', deviceType, mask)).toBe([...maskedBlock, openings + 'set name Visible'].join('\n'));
  });

  it.each(FORTIOS_RULES)('%s: 25,000 indented openings whose only ends are less indented', (deviceType) => {
    const openings = '    config system snmp community\n    set name Visible\nend\n'.repeat(25_000);
    expect(maskConfigSecrets(openings, 'cli', deviceType, mask)).toBe(openings);
  });

  it('pairs an opening with the first later end of its own indentation', () => {
    const text = [
      '    config system snmp community',
      '        set name Deeper',
      '    end',
      '    set name AfterEnd',
      'config system snmp community',
      '    config system snmp community',
      '        set name Nested',
      '    end',
      '  end',
      '    set name Outer',
      'endless',
      'end-of-block',
      'set name Later',
      'config system snmp community',
      '    set name Unclosed',
    ].join('\n');
    expect(maskConfigSecrets(text, 'cli', 'vendor_fw', mask).split('\n')).toEqual([
      '    config system snmp community',
      `        set name ${m('Deeper')}`,
      '    end',
      '    set name AfterEnd',
      'config system snmp community',
      '    config system snmp community',
      `        set name ${m('Nested')}`,
      '    end',
      '  end',
      `    set name ${m('Outer')}`,
      'endless',
      'end-of-block',
      'set name Later',
      'config system snmp community',
      '    set name Unclosed',
    ]);
  });

  it('masks a block written with CRLF line ends', () => {
    const text = ['config system snmp community', '    edit 1', '        set name CrlfComm', '    next', 'end', ''].join('\r\n');
    expect(maskConfigSecrets(text, 'cli', 'vendor_fw', mask)).toBe(text.replace('CrlfComm', m('CrlfComm')));
  });
});

describe('Cisco-like keyword lines', () => {
  /** What the line is, a 1 MB line of it with no secret, and the secret that ends it. */
  const cases: Array<[string, string, string]> = [
    // `\S+\b.*?`: the rest of the line again from each word boundary of the user name.
    ['username', `username ${pump('a-')}`, ' secret 0 UserPw'],
    // `host \S+.*?`: the same from each character of the host.
    ['radius-server host', `radius-server host ${pump('a-')}`, ' key 7 RadiusPw'],
    // From each `ldap-server host` of a line to its end.
    ['ldap-server host', pump('ldap-server host x '), 'password 0 LdapPw'],
  ];

  const rows = CISCO_RULES.flatMap((type) => cases.map(([what, run, tail]): [string, string, string, string] => [type, what, run, tail]));
  it.each(rows)('%s: %s', (deviceType, _what, run, tail) => {
    const secret = tail.split(' ').at(-1)!;
    const text = [run, run + tail, 'hostname r1'].join('\n');
    expect(maskConfigSecrets(text, 'cli', deviceType, mask)).toBe([run, run + tail.replace(secret, m(secret)), 'hostname r1'].join('\n'));
  });

  it('masks as before around what changed in those rules', () => {
    const lines = [
      'username - secret 0 NoWordName',
      'username a- secret 0 DashName',
      'username -a password 7 LeadDash',
      'tacacs-server host 10.0.0.1 port 49 key 7 TacHostKey',
      'ldap-server host 10.0.0.8 ldap-server host 10.0.0.9 password 0 TwoHosts',
      'ldap-server host 10.0.0.8 password ; ldap-server host 10.0.0.9 password 0 SecondTry',
    ];
    expect(maskConfigSecrets(lines.join('\n'), 'cli', 'vendor_ios', mask).split('\n')).toEqual([
      'username - secret 0 NoWordName',
      `username a- secret 0 ${m('DashName')}`,
      `username -a password 7 ${m('LeadDash')}`,
      `tacacs-server host 10.0.0.1 port 49 key 7 ${m('TacHostKey')}`,
      `ldap-server host 10.0.0.8 ldap-server host 10.0.0.9 password 0 ${m('TwoHosts')}`,
      `ldap-server host 10.0.0.8 password ; ldap-server host 10.0.0.9 password 0 ${m('SecondTry')}`,
    ]);
  });
});

describe('XML', () => {
  // Every `<password ` reached for the same `>` across the others.
  it('1 MB of secret element openings that never close their tag', () => {
    const run = pump('<password a ');
    const text = `${run}<password>XmlPw</password>`;
    const expected = `${run}<password>${m('XmlPw')}</password>`;
    expect(maskConfigSecrets(text, 'xml', 'vendor_junos', mask)).toBe(expected);
    expect(maskConfigSecrets(`${run}<secret id="1">Tail`, 'xml', 'vendor_junos', mask)).toBe(`${run}<secret id="1">${m('Tail')}`);
  });

  // From each `>`, a hash's text ran to the end of the text looking for a `<`.
  it('1 MB of hashes after the last tag', () => {
    const run = pump('> $1$');
    const text = `<x> $6$salt$Hash</x>${run}`;
    expect(maskConfigSecrets(text, 'xml', 'vendor_junos', mask)).toBe(`<x> ${m('$6$salt$Hash')}</x>${run}`);
  });
});

describe("the device's own credentials", () => {
  // Each blank looked back over the run to the line's start, for a line of a multi-line credential.
  it('a 1 MB line of blanks, then a short line of a credential as a whole line', () => {
    const blanks = pump(' \t');
    const text = [blanks, '  abc', 'abcd', 'a line one here'].join('\n');
    expect(maskConfigSecrets(text, 'text', 'generic', mask, ['a line one here\nabc'])).toBe([blanks, `  ${MASK}`, 'abcd', MASK].join('\n'));
  });
});

describe('dry-run diffs', () => {
  const maskText = (text: string) => maskConfigSecrets(text, 'cli', 'vendor_ios', mask);
  /** A hunk that changes the enable secret, then `lines` of context. */
  const hunk = (lines: string[], [old, now] = ['OldPw', 'NewPw']) => {
    const count = lines.length + 1;
    return ['--- a', '+++ b', `@@ -1,${count} +1,${count} @@`, `-enable secret 0 ${old}`, `+enable secret 0 ${now}`, ...lines];
  };
  const masked = (lines: string[]) => hunk(lines, [m('OldPw'), m('NewPw')]);

  // Each line is checked for a key's last body line: `[a-z].*[A-Z]` ran from each letter to the line's end.
  it('a 1 MB context line of words', () => {
    const lines = [` ${pump('a ')}`, ' hostname r1'];
    expect(maskDiffSecrets(hunk(lines).join('\n'), maskText)).toBe(masked(lines).join('\n'));
  });

  // Spread into one call's arguments, a hunk's lines overflowed the stack.
  it('a hunk of 200,000 lines', () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => ` ${i}`);
    expect(maskDiffSecrets(hunk(lines).join('\n'), maskText)).toBe(masked(lines).join('\n'));
  });
});

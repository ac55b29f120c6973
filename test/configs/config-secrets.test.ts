/**
 * Masking the device's own secrets in stored configs, per dialect: each secret value becomes a
 * stable `<secret:xxxxxxxx>` (keyed HMAC), everything else stays as it was. The same function
 * masks transcripts and errors (format `text`), with the device's own credentials too.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MASK, maskConfigSecrets, maskDiffSecrets, secretMasker } from '../../controller/src/configs/config-secrets';

const KEY = Buffer.alloc(32, 7);
const mask = secretMasker(KEY);
const m = (value: string) => `<secret:${createHmac('sha256', KEY).update(value).digest('hex').slice(0, 8)}>`;

/** Masks `text`, checks no secret survives and every other line is unchanged. */
function check(text: string, format: string, deviceType: string, secrets: string[], credentials: string[] = []): string {
  const out = maskConfigSecrets(text, format, deviceType, mask, credentials);
  for (const secret of secrets) {
    expect(out, `${secret} is masked`).not.toContain(secret);
    expect(out).toContain(m(secret));
  }
  const kept = text.split('\n').filter((line) => !secrets.some((s) => line.includes(s)));
  for (const line of kept) expect(out.split('\n')).toContain(line);
  return out;
}

describe('config secret masking per dialect', () => {
  it('IOS / IOS-XE', () => {
    const text = [
      'hostname edge1',
      'enable secret 9 $9$Zk1H0w2Yb3mD4s5',
      'username admin privilege 15 secret 9 $9$Q1w2E3r4T5y6U7$abcdefghijklmnop',
      'username ops password 7 094F471A1A0A',
      'snmp-server community n0tpublic RO MGMT',
      'snmp-server user mon grp v3 auth sha AuthPass123 priv aes 128 PrivPass456',
      'tacacs-server key 7 0822455D0A16',
      'tacacs server ISE',
      ' address ipv4 10.0.0.5',
      ' key 7 13061E010803',
      'router bgp 65000',
      ' neighbor 10.1.1.1 password 7 045802150C2E',
      'interface GigabitEthernet0/1',
      ' description to core',
      ' ip ospf authentication-key 7 1511021F0725',
      ' ip ospf message-digest-key 1 md5 7 110A1016141D',
      'key chain OSPF',
      ' key 1',
      '  key-string 7 02050D480809',
      'crypto isakmp key Sup3rPsk address 192.0.2.1',
      'line vty 0 4',
      ' password 7 0822455D0A16',
    ].join('\n');
    const out = check(text, 'cli', 'vendor_ios', [
      '$9$Zk1H0w2Yb3mD4s5',
      '$9$Q1w2E3r4T5y6U7$abcdefghijklmnop',
      '094F471A1A0A',
      'n0tpublic',
      'AuthPass123',
      'PrivPass456',
      '0822455D0A16',
      '13061E010803',
      '045802150C2E',
      '1511021F0725',
      '110A1016141D',
      '02050D480809',
      'Sup3rPsk',
    ]);
    expect(out).toContain(`enable secret 9 ${m('$9$Zk1H0w2Yb3mD4s5')}`);
    expect(out).toContain(`snmp-server community ${m('n0tpublic')} RO MGMT`);
    expect(out).toContain(' key 1\n');
    // The same value masks the same everywhere (tacacs-server key and the vty password).
    expect(out.split(m('0822455D0A16')).length - 1).toBe(2);
  });

  it('NX-OS', () => {
    const text = [
      'username admin password 5 $5$ABCD$0123456789abcdef  role network-admin',
      'snmp-server user admin network-admin auth md5 0x1234abcd priv 0x5678ef01 localizedkey',
      'snmp-server community public group network-operator',
      'tacacs-server key 7 "fewhg123"',
      'radius-server host 10.0.0.9 key 7 "radk3y"',
      'router bgp 65000',
      '  neighbor 10.1.1.1',
      '    password 3 5ae8c2d1f0',
      'feature tacacs+',
    ].join('\n');
    const out = check(text, 'cli', 'vendor_nxos', [
      '$5$ABCD$0123456789abcdef',
      '0x1234abcd',
      '0x5678ef01',
      'public',
      'fewhg123',
      'radk3y',
      '5ae8c2d1f0',
    ]);
    expect(out).toContain(`username admin password 5 ${m('$5$ABCD$0123456789abcdef')}  role network-admin`);
    expect(out).toContain(`tacacs-server key 7 "${m('fewhg123')}"`);
  });

  it('EOS', () => {
    const text = [
      'username admin privilege 15 role network-admin secret sha512 $6$abc$0123456789',
      'enable password sha512 $6$xyz$9876543210',
      'snmp-server community s3cret-ro ro',
      'router bgp 65001',
      '   neighbor 10.2.2.2 password 7 AbCdEf==',
      'vlan 10',
      '   name users',
    ].join('\n');
    check(text, 'cli', 'vendor_eos', ['$6$abc$0123456789', '$6$xyz$9876543210', 's3cret-ro', 'AbCdEf==']);
  });

  it('Junos, curly and set forms', () => {
    const curly = [
      'system {',
      '    root-authentication {',
      '        encrypted-password "$6$abc$0123456789abcdef"; ## SECRET-DATA',
      '    }',
      '    tacplus-server {',
      '        10.0.0.5 secret "$9$tacacsKey"; ## SECRET-DATA',
      '    }',
      '}',
      'snmp {',
      '    community s3cretcomm {',
      '        authorization read-only;',
      '    }',
      '}',
      'protocols {',
      '    bgp {',
      '        group ext {',
      '            authentication-key "$9$bgpKey"; ## SECRET-DATA',
      '        }',
      '    }',
      '}',
    ].join('\n');
    const out = check(curly, 'cli', 'vendor_junos', ['$6$abc$0123456789abcdef', '$9$tacacsKey', 's3cretcomm', '$9$bgpKey']);
    expect(out).toContain(`encrypted-password "${m('$6$abc$0123456789abcdef')}"; ## SECRET-DATA`);
    expect(out).toContain(`    community ${m('s3cretcomm')} {`);
    const set = [
      'set system root-authentication encrypted-password "$6$abc$0123456789abcdef"',
      'set snmp community s3cretcomm authorization read-only',
      'set security ike policy p1 pre-shared-key ascii-text "$9$ikeKey"',
      'set system host-name r1',
    ].join('\n');
    check(set, 'cli', 'vendor_junos', ['$6$abc$0123456789abcdef', 's3cretcomm', '$9$ikeKey']);
  });

  it('Junos over NETCONF (xml)', () => {
    const xml = [
      '<configuration>',
      '  <system><root-authentication><encrypted-password>$6$abc$0123</encrypted-password></root-authentication><host-name>r1</host-name></system>',
      '  <snmp><community><name>s3cretcomm</name><authorization>read-only</authorization></community></snmp>',
      '  <protocols><bgp><group><name>ext</name><authentication-key>$9$bgpKey</authentication-key></group></bgp></protocols>',
      '</configuration>',
    ].join('\n');
    const out = check(xml, 'xml', 'vendor_junos', ['$6$abc$0123', 's3cretcomm', '$9$bgpKey']);
    expect(out).toContain('<host-name>r1</host-name>');
    expect(out).toContain('<name>ext</name>');
  });

  it('PAN-OS, set lines and xml', () => {
    const set = [
      'set mgt-config users admin phash $1$pwhash$abcdefgh',
      'set network ike gateway gw1 authentication pre-shared-key key -AQ==psk0123',
      'set deviceconfig system snmp-setting access-setting version v2c snmp-community-string c0mm',
      'set deviceconfig system hostname fw1',
    ].join('\n');
    check(set, 'cli', 'vendor_panos', ['$1$pwhash$abcdefgh', '-AQ==psk0123', 'c0mm']);
    const xml = '<users><entry name="admin"><phash>$1$pwhash$abcdefgh</phash></entry></users><hostname>fw1</hostname>';
    expect(maskConfigSecrets(xml, 'xml', 'vendor_panos', mask)).toBe(
      `<users><entry name="admin"><phash>${m('$1$pwhash$abcdefgh')}</phash></entry></users><hostname>fw1</hostname>`,
    );
  });

  it('OpenConfig JSON over gNMI', () => {
    const users = { user: [{ username: 'admin', config: { 'password-hashed': '$6$x$y', role: 'admin' } }] };
    const tacacs = { 'server-group': [{ servers: { server: [{ tacacs: { config: { 'secret-key': 'tk3y' } } }] } }] };
    const json = JSON.stringify({ system: { aaa: { authentication: { users }, 'server-groups': tacacs } } }, null, 2);
    const out = check(json, 'json', 'vendor_eos', ['$6$x$y', 'tk3y']);
    expect(JSON.parse(out).system.aaa.authentication.users.user[0].config).toEqual({ 'password-hashed': m('$6$x$y'), role: 'admin' });
  });

  it('is stable, keyed, and leaves masked text alone', () => {
    const line = 'enable secret 9 $9$abc';
    const once = maskConfigSecrets(line, 'cli', 'vendor_ios', mask);
    expect(maskConfigSecrets(line, 'cli', 'vendor_ios', mask)).toBe(once);
    expect(maskConfigSecrets(once, 'cli', 'vendor_ios', mask)).toBe(once);
    expect(maskConfigSecrets(line, 'cli', 'vendor_ios', secretMasker(Buffer.alloc(32, 8)))).not.toBe(once);
    expect(once).toMatch(/^enable secret 9 <secret:[0-9a-f]{8}>$/);
    // An unknown device type gets every dialect's rules.
    expect(maskConfigSecrets('snmp-server community abc RO', 'cli', 'other', mask)).toBe(`snmp-server community ${m('abc')} RO`);
  });
});

/**
 * What each dialect writes for the kinds of secret the audit listed (SNMP communities and v3
 * keys, TACACS+/RADIUS keys, BGP/OSPF/IS-IS keys, enable secrets, PPP, WPA, IKE/IPsec, Junos
 * `$9$` and encrypted-password, EOS and NX-OS forms), with the values that must not show. Each is
 * checked in its own dialect and as a device of unknown type (every dialect's rules at once).
 */
const GAPS: Record<string, { text: string[]; secrets: string[] }> = {
  vendor_ios: {
    text: [
      'snmp-server user monitor NMS v3 auth sha SnmpAuthS3cret priv aes 128 SnmpPrivS3cret',
      'snmp-server host 192.0.2.9 version 2c TrapC0mm udp-port 162',
      'snmp-server host 192.0.2.10 vrf MGMT informs version 2c InformC0mm',
      'snmp-server host 192.0.2.11 version 3 priv monitor',
      'enable password level 15 7 EnableLvl15',
      'radius-server host 192.0.2.6 auth-port 1812 acct-port 1813 key 7 RadiusHostKey',
      'tacacs server ISE',
      ' address ipv4 192.0.2.5',
      ' key PlainTacacsKey',
      'aaa server radius dynamic-author',
      ' client 192.0.2.7 server-key 7 DynAuthKey',
      'interface Dialer1',
      ' ppp chap hostname edge1',
      ' ppp chap password 7 ChapS3cret',
      ' ppp pap sent-username edge1 password 0 PapS3cret',
      ' standby 1 authentication HsrpPlain',
      ' vrrp 2 authentication text VrrpText',
      ' ip ospf message-digest-key 2 sha256 7 OspfSha256',
      'router isis',
      ' area-password IsisArea',
      ' domain-password IsisDomain',
      'ntp authentication-key 1 md5 NtpMd5Key 7',
      'crypto keyring KR',
      ' pre-shared-key address 192.0.2.1 key KeyringPsk',
      'crypto ikev2 keyring K2',
      ' peer hub',
      '  pre-shared-key local Ikev2LocalPsk',
      'crypto ikev2 profile P',
      ' authentication remote pre-share key Ikev2ProfilePsk',
      'dot11 ssid CORP',
      ' authentication key-management wpa version 2',
      ' wpa-psk ascii 0 WifiPskS3cret',
      ' wpa-psk hex 7 WifiHexKey',
      'wlan GUEST 2 GUEST',
      ' security wpa akm psk set-key ascii 0 WlcPskKey',
      'archive',
      ' path ftp://backup:ArchiveUrlPw@192.0.2.20/cfg',
      'ip ftp password 7 FtpClientPw',
      'password encryption aes',
      'service password-encryption',
      'key chain OSPF',
      ' key 1',
    ],
    secrets: [
      'SnmpAuthS3cret',
      'SnmpPrivS3cret',
      'TrapC0mm',
      'InformC0mm',
      'EnableLvl15',
      'RadiusHostKey',
      'PlainTacacsKey',
      'DynAuthKey',
      'ChapS3cret',
      'PapS3cret',
      'HsrpPlain',
      'VrrpText',
      'OspfSha256',
      'IsisArea',
      'IsisDomain',
      'NtpMd5Key',
      'KeyringPsk',
      'Ikev2LocalPsk',
      'Ikev2ProfilePsk',
      'WifiPskS3cret',
      'WifiHexKey',
      'WlcPskKey',
      'ArchiveUrlPw',
      'FtpClientPw',
    ],
  },
  vendor_xr: {
    text: [
      'username ops',
      ' group operator',
      ' password 7 XrUserPw',
      'snmp-server user mon NMS v3 auth sha encrypted XrSnmpAuth priv aes 128 encrypted XrSnmpPriv',
      'snmp-server host 192.0.2.9 traps version 2c XrTrapComm',
      'key chain ISIS',
      ' key 1',
      '  key-string password XrKeyString',
      'router ospf 1',
      ' area 0',
      '  authentication-key encrypted XrOspfKey',
      '  message-digest-key 1 md5 encrypted XrOspfMd5',
      'router isis core',
      ' lsp-password hmac-md5 encrypted XrLspPw',
      'router bgp 65001',
      ' neighbor 192.0.2.2',
      '  password encrypted XrBgpPw',
    ],
    secrets: ['XrUserPw', 'XrSnmpAuth', 'XrSnmpPriv', 'XrTrapComm', 'XrKeyString', 'XrOspfKey', 'XrOspfMd5', 'XrLspPw', 'XrBgpPw'],
  },
  vendor_nxos: {
    text: [
      'snmp-server user ops network-operator auth sha-256 NxAuthKey priv aes-128 NxPrivKey',
      'snmp-server host 192.0.2.9 traps version 2c NxTrapComm',
      'snmp-server host 192.0.2.9 use-vrf management',
      'tacacs-server host 192.0.2.5 key 7 "NxTacHostKey" port 49',
      'ldap-server host 192.0.2.8 rootDN "cn=sb,dc=example" password 7 NxLdapPw port 389',
      'ntp authentication-key 2 md5 NxNtpKey 7',
      'interface Vlan10',
      '  hsrp 10',
      '    authentication text NxHsrpText',
      '  ip ospf authentication-key 3 NxOspfKey',
      '  ip ospf message-digest-key 1 md5 3 NxOspfMd5',
      'password strength-check',
    ],
    secrets: ['NxAuthKey', 'NxPrivKey', 'NxTrapComm', 'NxTacHostKey', 'NxLdapPw', 'NxNtpKey', 'NxHsrpText', 'NxOspfKey', 'NxOspfMd5'],
  },
  vendor_eos: {
    text: [
      'aaa root secret sha512 $6$rootsalt$EosRootHash',
      'snmp-server user mon NMS v3 localized 0123abcd auth sha512 EosSnmpAuth priv aes256 EosSnmpPriv',
      'snmp-server host 192.0.2.9 vrf MGMT version 2c EosTrapComm',
      'tacacs-server host 192.0.2.5 vrf MGMT key 7 EosTacKey',
      'ntp authentication-key 1 md5 7 EosNtpKey',
      'interface Ethernet1',
      '   ip ospf message-digest-key 1 sha256 7 EosOspfSha',
      '   vrrp 1 peer authentication text EosVrrpText',
      'router isis core',
      '   authentication key 7 EosIsisKey',
      'management security',
      '   password minimum length 12',
    ],
    secrets: [
      '$6$rootsalt$EosRootHash',
      'EosSnmpAuth',
      'EosSnmpPriv',
      'EosTrapComm',
      'EosTacKey',
      'EosNtpKey',
      'EosOspfSha',
      'EosVrrpText',
      'EosIsisKey',
    ],
  },
  vendor_junos: {
    text: [
      'set snmp v3 usm local-engine user mon authentication-sha authentication-key "$9$junosSnmpAuth"',
      'set snmp v3 usm local-engine user mon privacy-aes128 privacy-key "$9$junosSnmpPriv"',
      'set system ntp authentication-key 1 type md5 value "$9$junosNtp"',
      'set access profile dial client edge chap-secret "$9$junosChap"',
      'set interfaces pp0 unit 0 ppp-options pap local-password "$9$junosPap"',
      'set security ipsec vpn v1 manual authentication key ascii-text "$9$junosManual"',
      'set system login user ops authentication encrypted-password "$6$salt$junosOpsHash"',
      'set policy-options community CUST members 65000:100',
      'snmp {',
      '    community junosBareComm;',
      '}',
      'protocols {',
      '    isis {',
      '        interface ge-0/0/0.0 {',
      '            level 2 hello-authentication-key "$9$junosIsisHello";',
      '        }',
      '    }',
      '}',
    ],
    secrets: [
      '$9$junosSnmpAuth',
      '$9$junosSnmpPriv',
      '$9$junosNtp',
      '$9$junosChap',
      '$9$junosPap',
      '$9$junosManual',
      '$6$salt$junosOpsHash',
      'junosBareComm',
      '$9$junosIsisHello',
    ],
  },
  vendor_panos: {
    text: [
      'set deviceconfig system snmp-setting access-setting version v3 users mon authpwd -AQ==panAuth privpwd -AQ==panPriv',
      'set shared server-profile ldap corp bind-password -AQ==panBind',
      'set network virtual-router default protocol ospf auth-profile ap password -AQ==panOspf',
      'set network virtual-router default protocol ospf auth-profile md md5 1 key -AQ==panMd5',
      'set shared server-profile radius rad server r1 secret -AQ==panRadius',
      'set deviceconfig system password-complexity enabled yes',
    ],
    secrets: ['-AQ==panAuth', '-AQ==panPriv', '-AQ==panBind', '-AQ==panOspf', '-AQ==panMd5', '-AQ==panRadius'],
  },
  vendor_fw: {
    text: [
      'config system snmp community',
      '    edit 1',
      '        set name "fortiComm"',
      '        config hosts',
      '            edit 1',
      '                set ip 192.0.2.9 255.255.255.255',
      '            next',
      '        end',
      '    next',
      'end',
      'config system interface',
      '    edit "port1"',
      '        set name "uplink"',
      '    next',
      'end',
      'config system snmp user',
      '    edit "mon"',
      '        set auth-pwd ENC fortiSnmpAuth',
      '        set priv-pwd ENC fortiSnmpPriv',
      '    next',
      'end',
      'config wireless-controller vap',
      '    edit "corp"',
      '        set passphrase ENC fortiWifiPsk',
      '    next',
      'end',
      'config vpn ipsec phase1-interface',
      '    edit "hub"',
      '        set psksecret ENC fortiPsk',
      '    next',
      'end',
      'config router bgp',
      '    config neighbor',
      '        edit "192.0.2.2"',
      '            set password ENC fortiBgp',
      '        next',
      '    end',
      'end',
      'config vpn certificate local',
      '    edit "c"',
      '        set private-key "-----BEGIN ENCRYPTED PRIVATE KEY-----',
      'MIIFortiPrivateKeyBody',
      '-----END ENCRYPTED PRIVATE KEY-----"',
      '    next',
      'end',
    ],
    secrets: ['fortiComm', 'fortiSnmpAuth', 'fortiSnmpPriv', 'fortiWifiPsk', 'fortiPsk', 'fortiBgp', 'MIIFortiPrivateKeyBody'],
  },
};

describe('the secrets every dialect writes', () => {
  it.each(Object.keys(GAPS))('%s: masked in its own dialect and as a device of unknown type', (deviceType) => {
    const { text, secrets } = GAPS[deviceType];
    const own = maskConfigSecrets(text.join('\n'), 'cli', deviceType, mask);
    const unknown = maskConfigSecrets(text.join('\n'), 'cli', 'generic', mask);
    for (const out of [own, unknown]) {
      for (const secret of secrets) expect(out, `${deviceType}: ${secret}`).not.toContain(secret);
    }
    // Lines without a secret stay as they were (a private key spans lines: its body is in `secrets`).
    const kept = text.filter((line) => !secrets.some((s) => line.includes(s)) && !line.includes('PRIVATE KEY'));
    for (const line of kept) expect(own.split('\n'), deviceType).toContain(line);
  });

  it('masks the audit case exactly where the config endpoints do', () => {
    const out = maskConfigSecrets(GAPS.vendor_ios.text.join('\n'), 'cli', 'vendor_ios', mask).split('\n');
    expect(out).toContain(`snmp-server user monitor NMS v3 auth sha ${m('SnmpAuthS3cret')} priv aes 128 ${m('SnmpPrivS3cret')}`);
    expect(out).toContain(` wpa-psk ascii 0 ${m('WifiPskS3cret')}`);
    expect(out).toContain(`snmp-server host 192.0.2.11 version 3 priv monitor`);
    expect(out).toContain(' key 1');
  });
});

describe('transcripts, errors and the device credentials (format text)', () => {
  it('reads a session every way at once: CLI lines, NETCONF XML and gNMI JSON', () => {
    const session = [
      '# cli backup of r1 over ssh',
      '> show running-config',
      'snmp-server user monitor NMS v3 auth sha SnmpAuthS3cret priv aes 128 SnmpPrivS3cret',
      ' wpa-psk ascii 0 WifiPskS3cret',
      '> <rpc><get-config><source><running/></source></get-config></rpc>',
      '<configuration><system><root-authentication><encrypted-password>$6$x$RootHash</encrypted-password></root-authentication></system></configuration>',
      '> Get {"path": "/system"}',
      '{"openconfig-system:config": {"password-hashed": "$6$y$GnmiHash", "hostname": "r1"}}',
    ].join('\n');
    const out = check(session, 'text', 'vendor_ios', ['SnmpAuthS3cret', 'SnmpPrivS3cret', 'WifiPskS3cret', '$6$x$RootHash', '$6$y$GnmiHash']);
    expect(out).toContain('> show running-config');
  });

  it('masks the device credentials wherever they appear, longest first, after the rules', () => {
    const out = maskConfigSecrets('login netops/hunter2-long then hunter2\nenable secret 0 hunter2', 'text', 'vendor_ios', mask, [
      'hunter2',
      'hunter2-long',
      'no', // shorter than 3: never masked
    ]);
    // The rule masks the config value with its keyed mask (so a diff still compares it); the credential pass the rest.
    expect(out).toBe(`login netops/${MASK} then ${MASK}\nenable secret 0 ${m('hunter2')}`);
  });

  it('masks a private key echoed with other line endings, and never reaches into a mask', () => {
    const key = '-----BEGIN KEY-----\nabc123\n-----END KEY-----';
    // Its line breaks stay after the mask: masking keeps the lines.
    expect(maskConfigSecrets(`sent ${key.replace(/\n/g, '\r\n')} and ${key}`, 'text', null, mask, [key])).toBe(
      `sent ${MASK}\r\n\r\n and ${MASK}\n\n`,
    );
    const masked = maskConfigSecrets('snmp-server community c0mm RO', 'cli', 'vendor_ios', mask);
    const hex = /<secret:([0-9a-f]{8})>/.exec(masked)![1];
    expect(maskConfigSecrets(masked, 'text', 'vendor_ios', mask, [hex.slice(0, 4)])).toBe(masked);
  });

  it('never reaches onto the next line, leaves key fingerprints and masks already there alone', () => {
    const notes = [
      '# host key SHA256:Nq8V0mXwVtD3uQ (ssh-ed25519) matches the pinned key',
      'netops authenticated as netops (password)',
      'r1: the device asks for an enable password but the connection profile has none',
      'Password: ',
      'enable secret 5 ********',
      'snmp-server community ******** RO',
    ].join('\n');
    expect(maskConfigSecrets(notes, 'text', 'generic', mask)).toBe(notes);
    for (const text of ['secret\n  hostname r1', 'username admin\n secret\n hostname r1', 'snmp community\n    edit 1', 'password\nhostname r1']) {
      expect(maskConfigSecrets(text, 'text', 'generic', mask)).toBe(text);
    }
  });

  it('masks what an older release stored, whose keyword pass masked a type word instead of the value', () => {
    const old = [
      ' wpa-psk ******** 0 WifiPskOld',
      '  key-string ******** XrKeyOld',
      '  pre-shared-key ******** Ikev2Old',
      'ntp authentication-key 1 ******** NtpOld 7',
      'snmp-server user mon NMS v3 auth sha SnmpAuthOld priv aes 128 SnmpPrivOld',
      'enable secret 5 ********',
      'set network ike gateway gw authentication pre-shared-key ******** -AQ==PanOld',
      '    set psksecret ******** FortiOld',
    ].join('\n');
    const secrets = ['WifiPskOld', 'XrKeyOld', 'Ikev2Old', 'NtpOld', 'SnmpAuthOld', 'SnmpPrivOld', '-AQ==PanOld', 'FortiOld'];
    const out = maskConfigSecrets(old, 'text', 'generic', mask);
    for (const secret of secrets) expect(out).not.toContain(secret);
    expect(out).toContain(` wpa-psk ******** 0 ${m('WifiPskOld')}`);
    expect(out).toContain('enable secret 5 ********');
  });
});

describe('dry-run diffs: each hunk side masked as text of its format, lines kept', () => {
  const cli = (text: string) => maskConfigSecrets(text, 'cli', 'vendor_ios', mask, ['hunter2']);
  const xml = (text: string) => maskConfigSecrets(text, 'xml', 'vendor_junos', mask, ['Pr0file-pw']);
  const json = (text: string) => maskConfigSecrets(text, 'json', 'openconfig', mask);
  const forti = (text: string) => maskConfigSecrets(text, 'cli', 'fortigate', mask);

  /** Masks `diff` with `maskText`, checks the lines and markers stay, masking twice is masking once, and answers the lines. */
  function maskedDiff(diff: string[], maskText: (text: string) => string): string[] {
    const out = maskDiffSecrets(diff.join('\n'), maskText);
    expect(maskDiffSecrets(out, maskText)).toBe(out);
    const lines = out.split('\n');
    expect(lines.map((l) => l.slice(0, 1))).toEqual(diff.map((l) => l.slice(0, 1)));
    for (const [i, line] of diff.entries()) if (/^(?:@@|---|\+\+\+)/.test(line)) expect(lines[i]).toBe(line);
    return lines;
  }

  it('masks changed and context lines with the rules and the device credentials, headers kept', () => {
    const diff = [
      '--- running',
      '+++ after',
      '@@ -1,2 +1,2 @@',
      '-snmp-server community old RO',
      '+snmp-server community n3w RO',
      ' hostname hunter2',
    ];
    expect(maskedDiff(diff, cli)).toEqual([
      '--- running',
      '+++ after',
      '@@ -1,2 +1,2 @@',
      `-snmp-server community ${m('old')} RO`,
      `+snmp-server community ${m('n3w')} RO`,
      ` hostname ${MASK}`,
    ]);
  });

  it('hides a context line whole when each side finds a different secret in it', () => {
    // Old side: <secret> opens on the removed line, so its text runs into the context line; the new
    // side sees no <secret> but the community inside the same line.
    const diff = ['@@ -1,2 +1,2 @@', '-<secret>', '+<name>', ' s3cr3t</secret><community><name>public</name></community>'];
    const out = maskedDiff(diff, xml);
    expect(out[3]).toBe(` ${MASK}`);
    expect(out.join('\n')).not.toMatch(/s3cr3t|public/);
  });

  it("masks the device's credentials in a form no rule knows, a multi-line private key too", () => {
    const key = '-----BEGIN KEY-----\nabc123\n-----END KEY-----';
    const diff = [
      '@@ -1,7 +1,7 @@',
      ' banner motd ^C',
      ' break-glass: admin / mypassw0rd',
      ' ^C',
      '-ntp server 192.0.2.1',
      '+ntp server 192.0.2.2',
      ...key.split('\n').map((l) => ` ${l}`),
    ];
    const out = maskedDiff(diff, (text) => maskConfigSecrets(text, 'cli', 'vendor_ios', mask, ['mypassw0rd', key]));
    expect(out).toContain(` break-glass: admin / ${MASK}`);
    expect(out.slice(-3)).toEqual([` ${MASK}`, ' ', ' ']);
    for (const secret of ['mypassw0rd', 'abc123', 'BEGIN KEY']) expect(out.join('\n')).not.toContain(secret);
  });

  it('masks each line of a multi-line credential when a hunk shows only the middle or the end of it', () => {
    // A key's header and trailer lines and its short last body line look like no key body, and a
    // banner-like passphrase looks like nothing at all: masking the whole value never saw them.
    const key = [
      '-----BEGIN RSA PRIVATE KEY-----',
      'Proc-Type: 4,ENCRYPTED',
      'DEK-Info: AES-128-CBC,8C3F0A1B2C3D4E5F',
      '',
      'MIIEpAIBAAKCAQEA7Vx1Y2Qz4R0e6f3nT8uYlK1b9pQw2sXv0dZ3hJmN5cLr4aGtBy',
      'kQ==',
      '-----END RSA PRIVATE KEY-----',
    ].join('\n');
    const passphrase = 'break-glass passphrase:\r\n  correct horse battery\r\n  staple 7719-2231\r\nok';
    const maskText = (text: string) => maskConfigSecrets(text, 'cli', 'vendor_ios', mask, ['hunter2', key, passphrase]);
    const diff = [
      '@@ -20,8 +20,9 @@',
      '   staple 7719-2231',
      ' ok',
      ' ^C',
      ' DEK-Info: AES-128-CBC,8C3F0A1B2C3D4E5F',
      ' ',
      ' MIIEpAIBAAKCAQEA7Vx1Y2Qz4R0e6f3nT8uYlK1b9pQw2sXv0dZ3hJmN5cLr4aGtBy',
      ' kQ==',
      ' -----END RSA PRIVATE KEY-----',
      '+ntp server 192.0.2.1 kQ== hunter2',
    ];
    expect(maskedDiff(diff, maskText)).toEqual([
      '@@ -20,8 +20,9 @@',
      `   ${MASK}`,
      // Under 3 characters, like a credential that short: shown.
      ' ok',
      ' ^C',
      ` ${MASK}`,
      ' ',
      ` ${MASK}`,
      ` ${MASK}`,
      ` ${MASK}`,
      // A short line of a credential is masked where it is a whole line only; a whole single-line credential anywhere, as before.
      `+ntp server 192.0.2.1 kQ== ${MASK}`,
    ]);
    // The same in any text of the device (a transcript), and the whole value still one mask.
    expect(maskText(`echo  correct horse battery\n${key}\nend`)).toBe(`echo  ${MASK}\n${MASK}${'\n'.repeat(6)}\nend`);
  });

  it('masks an XML element whose secret sits on lines of its own, or spans lines', () => {
    const diff = [
      '@@ -1,8 +1,8 @@',
      ' <system>',
      '-  <host-name>a</host-name>',
      '+  <host-name>b</host-name>',
      '   <password>',
      '     hunter2',
      '   </password>',
      // An element's text spanning lines, as the canonical XML writes it.
      '   <secret>NcHead',
      ' NcTailS3cret</secret>',
      '   <message>reached with Pr0file-pw</message>',
    ];
    const out = maskedDiff(diff, xml);
    expect(out.slice(4)).toEqual([
      '   <password>',
      `     ${m('hunter2')}`,
      '   </password>',
      `   <secret>${m('NcHead\nNcTailS3cret')}`,
      ' </secret>',
      `   <message>reached with ${MASK}</message>`,
    ]);
    // As the whole config shows those lines.
    const config = diff.filter((l) => /^[ -]/.test(l)).map((l) => l.slice(1));
    expect(xml(config.join('\n')).split('\n').slice(2)).toEqual(out.slice(4).map((l) => l.slice(1)));
  });

  it('masks an XML secret whose opening or closing tag the hunk does not show', () => {
    // The change is far enough from <password> that the hunk starts on its text, or ends on it.
    const starts = ['@@ -3,4 +3,4 @@', '     hunter2', '   </password>', '-  <host-name>a</host-name>', '+  <host-name>b</host-name>'];
    expect(maskedDiff(starts, xml).slice(1, 3)).toEqual([`     ${m('hunter2')}`, '   </password>']);
    const ends = ['@@ -1,4 +1,4 @@', '-  <host-name>a</host-name>', '+  <host-name>b</host-name>', '   <secret>', '     Ncs3cret'];
    expect(maskedDiff(ends, xml).slice(3)).toEqual(['   <secret>', `     ${m('Ncs3cret')}`]);
    // An element's text that is no secret's is shown, cut or not.
    const plain = ['@@ -3,3 +3,3 @@', '     core uplink', '   </description>', '-  <mtu>1500</mtu>', '+  <mtu>9000</mtu>'];
    expect(maskedDiff(plain, xml)[1]).toBe('     core uplink');
  });

  it('masks a JSON secret whose value starts on the next line', () => {
    const diff = ['@@ -1,5 +1,5 @@', ' {', '-  "hostname": "a",', '+  "hostname": "b",', '   "password-hashed":', '     "$6$x$GnmiHash"', ' }'];
    const out = maskedDiff(diff, json);
    expect(out[5]).toBe(`     "${m('$6$x$GnmiHash')}"`);
    expect(out.join('\n')).not.toContain('GnmiHash');
  });

  it('masks a CLI value spanning lines (a FortiOS private key) and a block only whole text tells apart', () => {
    const body = ['-----BEGIN ENCRYPTED PRIVATE KEY-----', 'MIIFortiOldBody', '-----END ENCRYPTED PRIVATE KEY-----'];
    const diff = [
      '@@ -1,12 +1,12 @@',
      ' config vpn certificate local',
      '     edit "c"',
      `         set private-key "${body[0]}`,
      '-MIIFortiOldBody',
      '+MIIFortiNewBody',
      ` ${body[2]}"`,
      '     next',
      ' end',
      ' config system snmp community',
      '     edit 1',
      '-        set name "fortiComm"',
      '+        set name "fortiC0mm"',
      '     next',
      ' end',
    ];
    const out = maskedDiff(diff, forti);
    expect(out.slice(3, 7)).toEqual([`         set private-key "${m(body.join('\n'))}"`, '-', '+', ' ']);
    expect(out.slice(11, 13)).toEqual([`-        set name "${m('fortiComm')}"`, `+        set name "${m('fortiC0mm')}"`]);
    for (const secret of ['MIIForti', 'fortiComm', 'fortiC0mm']) expect(out.join('\n')).not.toContain(secret);
  });

  it('hides the body lines of a key whose opening the hunk does not show (one line of a long key changed)', () => {
    const b64 = (n: number) => `MIIE${String(n).repeat(60)}`.slice(0, 64);
    const diff = ['@@ -10,7 +10,7 @@', ` ${b64(1)}`, ` ${b64(2)}`, ` ${b64(3)}`, `-${b64(4)}`, `+${b64(5)}`, ` ${b64(6)}`, ` ${b64(7)}`, ' next'];
    const out = maskedDiff(diff, forti);
    expect(out.slice(1, 8)).toEqual([` ${MASK}`, ` ${MASK}`, ` ${MASK}`, `-${MASK}`, `+${MASK}`, ` ${MASK}`, ` ${MASK}`]);
    expect(out[8]).toBe(' next');
  });

  it("hides a key's short last body line when the hunk shows the key's end but not its opening", () => {
    const b64 = (n: number) => `MIIE${String(n).repeat(60)}`.slice(0, 64);
    const end = '-----END ENCRYPTED PRIVATE KEY-----"';
    // The last line changed, the end line follows it.
    const changedLast = [
      '@@ -20,5 +20,5 @@',
      ` ${b64(1)}`,
      ` ${b64(2)}`,
      ` ${b64(3)}`,
      '-QmFzZTY0T2xkVGFpbA==',
      '+QmFzZTY0TmV3VGFpbA==',
      ` ${end}`,
      '     next',
    ];
    expect(maskedDiff(changedLast, forti).slice(1, 7)).toEqual([` ${MASK}`, ` ${MASK}`, ` ${MASK}`, `-${MASK}`, `+${MASK}`, ` ${end}`]);
    // A body line changed; the short last line is the hunk's last context line, the end line not shown.
    const cutBeforeEnd = ['@@ -20,4 +20,4 @@', `-${b64(1)}`, `+${b64(2)}`, ` ${b64(3)}`, ` ${b64(4)}`, ' U2hvcnRUYWls'];
    expect(maskedDiff(cutBeforeEnd, forti).slice(1)).toEqual([`-${MASK}`, `+${MASK}`, ` ${MASK}`, ` ${MASK}`, ` ${MASK}`]);
    for (const tail of ['QmFzZTY0T2xkVGFpbA', 'QmFzZTY0TmV3VGFpbA', 'U2hvcnRUYWls'])
      expect([...maskedDiff(changedLast, forti), ...maskedDiff(cutBeforeEnd, forti)].join('\n')).not.toContain(tail);
  });

  it('keeps the lines of a whole config however its secrets are laid out', () => {
    for (const [text, maskText] of [
      ['<password>\n  hunter2\n</password>\n<secret>a\nb\n</secret>', xml],
      ['{\n  "password":\n    "hunter2"\n}', json],
      ['set private-key "-----BEGIN\nabc\n-----END"\nnext', forti],
    ] as const) {
      expect(maskText(text).split('\n')).toHaveLength(text.split('\n').length);
      expect(maskText(maskText(text))).toBe(maskText(text));
    }
  });
});

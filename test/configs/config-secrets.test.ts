/**
 * Masking the device's own secrets in stored configs, per dialect: each secret value becomes a
 * stable `<secret:xxxxxxxx>` (keyed HMAC), everything else stays as it was.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { maskConfigSecrets, secretMasker } from '../../controller/src/configs/config-secrets';

const KEY = Buffer.alloc(32, 7);
const mask = secretMasker(KEY);
const m = (value: string) => `<secret:${createHmac('sha256', KEY).update(value).digest('hex').slice(0, 8)}>`;

/** Masks `text`, checks no secret survives and every other line is unchanged. */
function check(text: string, format: string, deviceType: string, secrets: string[]): string {
  const out = maskConfigSecrets(text, format, deviceType, mask);
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

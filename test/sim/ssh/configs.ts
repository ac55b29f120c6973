/**
 * Realistic running configurations per dialect, generated deterministically from the hostname
 * (same hostname → same config), and the volatile header each device prints around them.
 * A "body" is the part that only changes when the configuration changes; `render` wraps it in
 * the clock lines, byte counts and version stamps the device prints on every call.
 */

export interface ConfigStyle {
  body(hostname: string, interfaces: number): string;
  /** What the show-config command prints; `seq` grows on every call. */
  render(hostname: string, body: string, now: Date, seq: number): string;
}

/** Small deterministic PRNG seeded from a string. */
export function seeded(seed: string): () => number {
  let h = 2166136261;
  for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 16777619);
  return () => {
    h = (h + 0x6d2b79f5) | 0;
    let t = Math.imul(h ^ (h >>> 15), 1 | h);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const p2 = (n: number) => String(n).padStart(2, '0');
const hms = (d: Date) => `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`;

/** `12:00:01 UTC Mon Jan 1 2024` (IOS style). */
export const iosClock = (d: Date) => `${hms(d)} UTC ${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()} ${d.getUTCFullYear()}`;
/** `Mon Jan  1 12:00:01.123 UTC` (XR style). */
export const xrClock = (d: Date) =>
  `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ` +
  `${hms(d)}.${String(d.getUTCMilliseconds()).padStart(3, '0')} UTC`;
/** `2024-01-01 12:00:01 UTC`. */
export const isoClock = (d: Date) => `${d.toISOString().slice(0, 10)} ${hms(d)} UTC`;

function ip(rand: () => number, a = 10): string {
  return `${a}.${Math.floor(rand() * 250) + 1}.${Math.floor(rand() * 250) + 1}.${Math.floor(rand() * 250) + 1}`;
}

const DESCS = ['uplink', 'server', 'printer', 'ap', 'camera', 'phone', 'desk', 'lab', 'storage', 'backup'];

function vlanPlan(rand: () => number): Array<[number, string]> {
  const names = ['users', 'voice', 'servers', 'mgmt', 'guests', 'cameras', 'printers', 'lab'];
  return names.map((n, i) => [10 * (i + 1) + Math.floor(rand() * 5), n]);
}

function ciscoBody(
  hostname: string,
  interfaces: number,
  o: { version: string; ifName: (i: number) => string; extraTop?: string[]; platform?: string[] },
): string {
  const rand = seeded(hostname);
  const vlans = vlanPlan(rand);
  const L: string[] = ['!', `version ${o.version}`];
  L.push('service timestamps debug datetime msec', 'service timestamps log datetime msec', 'service password-encryption', '!');
  L.push(`hostname ${hostname}`, '!', 'boot-start-marker', 'boot-end-marker', '!', ...(o.platform ?? []));
  L.push(`enable secret 9 $9$${Math.floor(rand() * 1e12).toString(36)}$Zk1H0w2Yb3mD4s5`, '!', 'aaa new-model');
  L.push('aaa authentication login default local', 'aaa authorization exec default local', '!', 'clock timezone UTC 0 0');
  L.push('ip domain name example.net', `ip name-server ${ip(rand)}`, '!', ...(o.extraTop ?? []));
  L.push('username admin privilege 15 secret 9 $9$Q1w2E3r4T5y6U7$abcdefghijklmnop', '!', 'spanning-tree mode rapid-pvst', '!');
  for (const [id, name] of vlans) L.push(`vlan ${id}`, ` name ${name}`, '!');
  for (let i = 0; i < interfaces; i++) {
    const [vid] = vlans[i % vlans.length];
    L.push(`interface ${o.ifName(i)}`);
    if (i === 0) {
      L.push(' description uplink to core', ' switchport mode trunk', ' switchport trunk allowed vlan ' + vlans.map((v) => v[0]).join(','));
    } else {
      L.push(` description ${DESCS[Math.floor(rand() * DESCS.length)]}-${i}`, ' switchport mode access');
      L.push(` switchport access vlan ${vid}`, ' spanning-tree portfast');
      if (rand() < 0.2) L.push(' shutdown');
    }
    L.push('!');
  }
  for (const [id, name] of vlans) {
    L.push(`interface Vlan${id}`, ` description ${name}`, ` ip address 10.${id}.${Math.floor(rand() * 250)}.1 255.255.255.0`, '!');
  }
  L.push('router ospf 1', ` router-id ${ip(rand)}`, ' passive-interface default', ' network 10.0.0.0 0.255.255.255 area 0', '!');
  L.push(`ip route 0.0.0.0 0.0.0.0 ${ip(rand)}`, '!', 'ip access-list extended MGMT');
  L.push(' permit tcp 10.0.0.0 0.255.255.255 any eq 22', ' permit udp 10.0.0.0 0.255.255.255 any eq snmp', ' deny ip any any log', '!');
  L.push('snmp-server community n0tpublic RO MGMT', `snmp-server location rack-${Math.floor(rand() * 40)}`);
  L.push(`logging host ${ip(rand)}`, `ntp server ${ip(rand)}`, '!', 'banner motd ^C', 'Authorized access only', '^C', '!');
  L.push('line con 0', ' logging synchronous', 'line vty 0 15', ' access-class MGMT in', ' transport input ssh', '!', 'end');
  return L.join('\n') + '\n';
}

export const CONFIG_STYLES: Record<string, ConfigStyle> = {
  ios: {
    body: (h, n) => ciscoBody(h, n, { version: '15.2', ifName: (i) => `GigabitEthernet0/${i}` }),
    render: (_h, body, now) =>
      [
        'Building configuration...',
        '',
        `Current configuration : ${Buffer.byteLength(body)} bytes`,
        `! Last configuration change at ${iosClock(now)} by admin`,
        `! NVRAM config last updated at ${iosClock(new Date(now.getTime() - 3_600_000))} by admin`,
        body,
      ].join('\n'),
  },
  xe: {
    body: (h, n) =>
      ciscoBody(h, n, {
        version: '17.9',
        ifName: (i) => `GigabitEthernet1/0/${i + 1}`,
        platform: ['platform punt-keepalive disable-kernel-core', '!', 'license boot level network-advantage', '!'],
      }),
    render: (_h, body, now, seq) =>
      [
        'Building configuration...',
        '',
        `Current configuration : ${Buffer.byteLength(body)} bytes`,
        `! Last configuration change at ${iosClock(now)} by admin`,
        `! NVRAM config last updated at ${iosClock(new Date(now.getTime() - 60_000 * seq))} by admin`,
        body,
      ].join('\n'),
  },
  nxos: {
    body: (h, n) => {
      const rand = seeded(h);
      const L = ['version 9.3(8) Bios:version 05.45', `hostname ${h}`, ''];
      for (const f of ['ospf', 'interface-vlan', 'lacp', 'lldp', 'nxapi']) L.push(`feature ${f}`);
      L.push('', 'username admin password 5 $5$ABCD$0123456789abcdef  role network-admin', '', 'vlan 1,10,20,30');
      L.push('vlan 10', '  name users', 'vlan 20', '  name servers', '', 'vrf context management');
      L.push(`  ip route 0.0.0.0/0 ${ip(rand)}`, '');
      for (let i = 1; i <= n; i++) {
        L.push(`interface Ethernet1/${i}`, `  description ${DESCS[Math.floor(rand() * DESCS.length)]}-${i}`);
        L.push('  switchport mode access', `  switchport access vlan ${i % 2 ? 10 : 20}`, rand() < 0.2 ? '  shutdown' : '  no shutdown', '');
      }
      L.push('interface mgmt0', '  vrf member management', `  ip address ${ip(rand)}/24`, '');
      L.push('line console', 'line vty', 'router ospf 1', `  router-id ${ip(rand)}`, '');
      return L.join('\n') + '\n';
    },
    render: (_h, body, now) =>
      [
        '',
        '!Command: show running-config',
        `!Running configuration last done at: ${DAYS[now.getUTCDay()]} ${MONTHS[now.getUTCMonth()]} ${now.getUTCDate()} ${hms(now)} ${now.getUTCFullYear()}`,
        `!Time: ${DAYS[now.getUTCDay()]} ${MONTHS[now.getUTCMonth()]} ${now.getUTCDate()} ${hms(now)} ${now.getUTCFullYear()}`,
        '',
        body,
      ].join('\n'),
  },
  xr: {
    body: (h, n) => {
      const rand = seeded(h);
      const L = ['!! IOS XR Configuration 7.5.2', `hostname ${h}`, 'clock timezone UTC UTC', 'logging console informational'];
      L.push('username admin', ' group root-lr', ' group cisco-support', ' secret 10 $6$abc/def$0123456789', '!');
      for (let i = 0; i < n; i++) {
        L.push(`interface GigabitEthernet0/0/0/${i}`, ` description ${DESCS[Math.floor(rand() * DESCS.length)]}-${i}`);
        L.push(` ipv4 address 10.${i}.${Math.floor(rand() * 250)}.1 255.255.255.252`, rand() < 0.2 ? ' shutdown' : ' load-interval 30', '!');
      }
      L.push('router static', ' address-family ipv4 unicast', `  0.0.0.0/0 ${ip(rand)}`, ' !', '!');
      L.push('router bgp 65001', ` bgp router-id ${ip(rand)}`, ' address-family ipv4 unicast', ' !');
      L.push(` neighbor ${ip(rand)}`, '  remote-as 65000', '  address-family ipv4 unicast', '  !', ' !', '!', 'ssh server v2', 'end');
      return L.join('\n') + '\n';
    },
    render: (_h, body, now) =>
      [
        'Building configuration...',
        body.split('\n')[0],
        `!! Last configuration change at ${xrClock(now)} by admin`,
        ...body.split('\n').slice(1),
      ].join('\n'),
  },
  junos: {
    body: (h, n) => {
      const rand = seeded(h);
      const L = ['version 21.4R3.15;', 'system {', `    host-name ${h};`, '    root-authentication {'];
      L.push('        encrypted-password "$6$abc$0123456789abcdef"; ## SECRET-DATA', '    }', '    login {');
      L.push('        user admin {', '            uid 2000;', '            class super-user;', '        }', '    }');
      L.push('    services {', '        ssh;', '        netconf {', '            ssh;', '        }', '    }');
      L.push(`    name-server {`, `        ${ip(rand)};`, '    }', '    ntp {', `        server ${ip(rand)};`, '    }', '}');
      L.push('interfaces {');
      for (let i = 0; i < n; i++) {
        L.push(`    ge-0/0/${i} {`, `        description "${DESCS[Math.floor(rand() * DESCS.length)]}-${i}";`, '        unit 0 {');
        L.push(
          '            family inet {',
          `                address 10.${i}.${Math.floor(rand() * 250)}.1/30;`,
          '            }',
          '        }',
          '    }',
        );
      }
      L.push('}', 'routing-options {', '    static {', `        route 0.0.0.0/0 next-hop ${ip(rand)};`, '    }', '}');
      L.push('protocols {', '    ospf {', '        area 0.0.0.0 {', '            interface ge-0/0/0.0;', '        }', '    }');
      L.push('    lldp {', '        interface all;', '    }', '}');
      return L.join('\n') + '\n';
    },
    render: (_h, body, now) => [`## Last commit: ${isoClock(now)} by admin`, body].join('\n'),
  },
  eos: {
    body: (h, n) => {
      const rand = seeded(h);
      const L = [`! device: ${h} (DCS-7050SX3-48YC8, EOS-4.28.3M)`, '!', '! boot system flash:/EOS-4.28.3M.swi', '!'];
      L.push('transceiver qsfp default-mode 4x10G', '!', `hostname ${h}`, `ip name-server vrf default ${ip(rand)}`, '!');
      L.push('spanning-tree mode mstp', '!', 'aaa authorization exec default local', '!');
      L.push('username admin privilege 15 role network-admin secret sha512 $6$abc$0123456789', '!', 'vlan 10', '   name users', '!');
      for (let i = 1; i <= n; i++) {
        L.push(`interface Ethernet${i}`, `   description ${DESCS[Math.floor(rand() * DESCS.length)]}-${i}`, '   switchport access vlan 10');
        if (rand() < 0.2) L.push('   shutdown');
        L.push('!');
      }
      L.push('interface Management1', `   ip address ${ip(rand)}/24`, '!', 'ip routing', '!', `ip route 0.0.0.0/0 ${ip(rand)}`, '!');
      L.push('router ospf 1', `   router-id ${ip(rand)}`, '   max-lsa 12000', '!', 'management api http-commands', '   no shutdown', '!', 'end');
      return L.join('\n') + '\n';
    },
    render: (_h, body, now) =>
      [
        '! Command: show running-config',
        `! Time: ${DAYS[now.getUTCDay()]} ${MONTHS[now.getUTCMonth()]} ${now.getUTCDate()} ${hms(now)} ${now.getUTCFullYear()}`,
        body,
      ].join('\n'),
  },
  panos: {
    body: (h, n) => {
      const rand = seeded(h);
      const L = [`set deviceconfig system hostname ${h}`, `set deviceconfig system ip-address ${ip(rand)}`];
      L.push('set deviceconfig system netmask 255.255.255.0', `set deviceconfig system default-gateway ${ip(rand)}`);
      L.push(`set deviceconfig system dns-setting servers primary ${ip(rand)}`, 'set deviceconfig system timezone UTC');
      L.push('set mgt-config users admin permissions role-based superuser yes', 'set mgt-config users admin phash $5$abcdef$0123456789');
      for (let i = 1; i <= n; i++) {
        L.push(`set network interface ethernet ethernet1/${i} layer3 ip 10.${i}.${Math.floor(rand() * 250)}.1/24`);
        L.push(`set network interface ethernet ethernet1/${i} comment "${DESCS[Math.floor(rand() * DESCS.length)]}-${i}"`);
        L.push(`set zone ${i % 2 ? 'trust' : 'untrust'} network layer3 ethernet1/${i}`);
      }
      for (let r = 1; r <= Math.max(4, n / 2); r++) {
        L.push(
          `set rulebase security rules rule-${r} from trust to untrust source any destination any application any service application-default action allow`,
        );
      }
      L.push(`set network virtual-router default routing-table ip static-route default destination 0.0.0.0/0 nexthop ip-address ${ip(rand)}`);
      return L.join('\n') + '\n';
    },
    render: (_h, body, now) => [`# Generated at ${isoClock(now)}`, body].join('\n'),
  },
  fortios: {
    body: (h, n) => {
      const rand = seeded(h);
      const L = ['config system global', `    set alias "${h}"`, `    set hostname "${h}"`, '    set timezone 04', 'end'];
      L.push('config system admin', '    edit "admin"', '        set accprofile "super_admin"', '        set vdom "root"');
      L.push('        set password ENC SH2abcdef0123456789', '    next', 'end', 'config system interface');
      for (let i = 1; i <= n; i++) {
        L.push(`    edit "port${i}"`, '        set vdom "root"', `        set ip 10.${i}.${Math.floor(rand() * 250)}.1 255.255.255.0`);
        L.push(
          '        set allowaccess ping https ssh',
          '        set type physical',
          `        set alias "${DESCS[Math.floor(rand() * DESCS.length)]}-${i}"`,
          '    next',
        );
      }
      L.push('end', 'config router static', '    edit 1', `        set gateway ${ip(rand)}`, '        set device "port1"', '    next', 'end');
      L.push('config firewall policy');
      for (let r = 1; r <= Math.max(4, n / 2); r++) {
        L.push(
          `    edit ${r}`,
          `        set name "rule-${r}"`,
          '        set srcintf "port2"',
          '        set dstintf "port1"',
          '        set action accept',
        );
        L.push('        set srcaddr "all"', '        set dstaddr "all"', '        set schedule "always"', '        set service "ALL"', '    next');
      }
      L.push('end');
      return L.join('\n') + '\n';
    },
    render: (_h, body, now, seq) =>
      [
        `#config-version=FGT60F-7.2.5-FW-build1517-230606:opmode=0:vdom=0:user=admin`,
        `#conf_file_ver=${Math.floor(now.getTime() / 1000) * 1000 + seq}`,
        '#buildno=1517',
        '#global_vdom=1',
        body,
      ].join('\n'),
  },
  generic: {
    body: (h, n) => ciscoBody(h, Math.max(1, Math.floor(n / 2)), { version: '1.0', ifName: (i) => `eth${i}` }),
    render: (_h, body, now) => [`! Time: ${iosClock(now)}`, body].join('\n'),
  },
};

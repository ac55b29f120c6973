/**
 * The `| json` forms of the EOS and NX-OS discovery commands (Junos: `| display json`), rendered from the same model as the
 * text forms (discovery-data.ts) in the shapes those systems print. A device whose hostname is in
 * SIM_TEXT_ONLY answers them as an older release does, with an invalid-input error, so the
 * agent's fallback to text is exercised against the simulator too.
 */
import { registerSshCommand } from './cli';
import { allInterfaces, dotted, hms, simModel, type SimModel } from './discovery-data';

type Render = (m: SimModel) => string;

/** Hostnames whose `| json` commands are refused (a release without JSON output). */
export const SIM_TEXT_ONLY = new Set<string>();

const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';
const fullName = (m: SimModel, port: string) => m.ports.find((p) => p.short === port)?.name ?? port;
const shortName = (m: SimModel, port: string) => m.ports.find((p) => p.name === port)?.short ?? port;
const splitAddress = (a: string) => ({ address: a.split('/')[0], maskLen: Number(a.split('/')[1]) });

const EOS: Record<string, Render> = {
  'show interfaces | json': (m) =>
    json({
      interfaces: Object.fromEntries(
        allInterfaces(m).map((i) => [
          i.name,
          {
            name: i.name,
            description: i.description,
            interfaceStatus: !i.admin ? 'disabled' : i.oper ? 'connected' : 'notconnect',
            lineProtocolStatus: i.admin && i.oper ? 'up' : 'down',
            mtu: i.mac ? 1500 : 1514,
            bandwidth: (i.speed ?? 8000) * 1_000_000,
            duplex: i.oper && i.speed ? 'duplexFull' : 'duplexUnknown',
            ...(i.mac ? { physicalAddress: i.mac } : {}),
            interfaceAddress: i.address ? [{ primaryIp: splitAddress(i.address), secondaryIpsOrderedList: [] }] : [],
          },
        ]),
      ),
    }),
  'show lldp neighbors detail | json': (m) =>
    json({
      lldpNeighbors: Object.fromEntries(
        m.ports.map((p) => [
          p.name,
          {
            lldpNeighborInfo: m.neighbors
              .filter((nb) => nb.port === p)
              .map((nb) => ({
                chassisIdType: 'macAddress',
                chassisId: dotted(nb.remoteChassis),
                systemName: nb.remoteName,
                systemDescription: nb.remotePlatform,
                neighborInterfaceInfo: { interfaceIdType: 'interfaceName', interfaceId: `"${nb.remotePort}"`, interfaceId_v2: nb.remotePort },
                managementAddresses: [{ addressType: 'ipv4', address: nb.remoteAddress }],
              })),
          },
        ]),
      ),
    }),
  'show ip arp | json': (m) =>
    json({ ipV4Neighbors: m.arp.map((a) => ({ address: a.ip, hwAddress: dotted(a.mac), interface: a.iface, age: a.ageSeconds })) }),
  'show mac address-table | json': (m) =>
    json({
      unicastTable: {
        tableEntries: m.macs.map((e) => ({
          vlanId: e.vlan,
          macAddress: e.mac,
          entryType: e.type,
          interface: fullName(m, e.port),
          moves: 1,
          lastMove: 1700000000.5,
        })),
      },
      multicastTable: { tableEntries: [] },
    }),
  'show vlan | json': (m) =>
    json({
      vlans: Object.fromEntries(
        m.vlans.map((v) => [
          String(v.id),
          {
            name: v.name,
            status: 'active',
            dynamic: false,
            interfaces: Object.fromEntries(v.ports.map((p) => [fullName(m, p), { privatePromoted: false }])),
          },
        ]),
      ),
    }),
};

const NXOS: Record<string, Render> = {
  'show interface | json': (m) =>
    json({
      TABLE_interface: {
        ROW_interface: allInterfaces(m).map((i) => {
          const [ip, mask] = (i.address ?? '/').split('/');
          if (i.name.startsWith('Vlan')) {
            return {
              interface: i.name,
              svi_admin_state: i.admin ? 'up' : 'down',
              svi_line_proto: i.admin && i.oper ? 'up' : 'down',
              svi_mac: i.mac && dotted(i.mac),
              svi_desc: i.description || undefined,
              svi_mtu: 1500,
              svi_bw: 1000000,
              ...(i.address ? { svi_ip_addr: ip, svi_ip_mask: Number(mask) } : {}),
            };
          }
          return {
            interface: i.name,
            state: i.admin && i.oper ? 'up' : 'down',
            ...(i.admin ? (i.oper ? {} : { state_rsn_desc: 'Link not connected' }) : { state_rsn_desc: 'Administratively down' }),
            admin_state: i.admin ? 'up' : 'down',
            ...(i.mac ? { eth_hw_addr: dotted(i.mac) } : {}),
            ...(i.description ? { desc: i.description } : {}),
            eth_mtu: '1500',
            eth_bw: (i.speed ?? 8000) * 1000,
            ...(i.speed !== null && i.oper ? { eth_duplex: 'full', eth_speed: `${i.speed / 1000} Gb/s` } : {}),
            ...(i.address ? { eth_ip_addr: ip, eth_ip_mask: Number(mask) } : {}),
          };
        }),
      },
    }),
  'show cdp neighbors detail | json': (m) =>
    json({
      TABLE_cdp_neighbor_detail_info: {
        ROW_cdp_neighbor_detail_info: m.neighbors.map((nb) => ({
          device_id: `${nb.remoteName}(FOX2222A0BC)`,
          intf_id: nb.port.name,
          port_id: nb.remotePort,
          platform_id: nb.remotePlatform,
          v4addr: nb.remoteAddress,
        })),
      },
    }),
  'show lldp neighbors detail | json': (m) =>
    json({
      TABLE_nbor_detail: {
        ROW_nbor_detail: m.neighbors.map((nb) => ({
          chassis_id: dotted(nb.remoteChassis),
          port_id: nb.remotePort,
          l_port_id: nb.port.short,
          sys_name: nb.remoteName,
          sys_desc: nb.remotePlatform,
          mgmt_addr: nb.remoteAddress,
        })),
      },
    }),
  'show ip arp | json': (m) =>
    json({
      TABLE_vrf: {
        ROW_vrf: {
          'vrf-name-out': 'default',
          TABLE_adj: {
            ROW_adj: m.arp.map((a) => ({
              'intf-out': shortName(m, a.iface),
              'ip-addr-out': a.ip,
              'time-stamp': hms(a.ageSeconds),
              mac: dotted(a.mac),
            })),
          },
        },
      },
    }),
  'show mac address-table | json': (m) =>
    json({
      TABLE_mac_address: {
        ROW_mac_address: m.macs.map((e) => ({
          disp_mac_addr: dotted(e.mac),
          disp_type: e.type,
          disp_vlan: String(e.vlan),
          disp_is_static: e.type === 'static' ? 'enabled' : 'disabled',
          disp_port: e.port,
        })),
      },
    }),
  'show vlan brief | json': (m) =>
    json({
      TABLE_vlanbriefxbrief: {
        ROW_vlanbriefxbrief: m.vlans.map((v) => ({
          'vlanshowbr-vlanid': v.id,
          'vlanshowbr-vlanid-utf': v.id,
          'vlanshowbr-vlanname': v.name,
          'vlanshowbr-vlanstate': 'active',
          'vlanshowplist-ifidx': v.ports.map((p) => fullName(m, p)).join(','),
        })),
      },
    }),
};

/** Junos `| display json`: every element an array of objects, every leaf [{"data": …}]. */
const d = (v: string | number) => [{ data: String(v) }];
const unit = (name: string) => (name.includes('.') ? name : `${name}.0`);

const JUNOS: Record<string, Render> = {
  'show interfaces | display json': (m) =>
    json({
      'interface-information': [
        {
          'physical-interface': allInterfaces(m).map((i) => {
            const [ip, plen] = (i.address ?? '/').split('/');
            return {
              name: d(i.name),
              'admin-status': [{ data: i.admin ? 'up' : 'down', attributes: { 'junos:format': i.admin ? 'Enabled' : 'Disabled' } }],
              'oper-status': d(i.admin && i.oper ? 'up' : 'down'),
              ...(i.description ? { description: d(i.description) } : {}),
              mtu: d(1514),
              speed: d(i.speed ? `${i.speed}mbps` : 'Unlimited'),
              'link-mode': d('Full-duplex'),
              ...(i.mac ? { 'current-physical-address': d(i.mac) } : {}),
              ...(i.address
                ? {
                    'logical-interface': [
                      {
                        name: d(unit(i.name)),
                        'address-family': [
                          {
                            'address-family-name': d('inet'),
                            'interface-address': [{ 'ifa-local': d(ip), ...(plen === '32' ? {} : { 'ifa-destination': d(`${ip}/${plen}`) }) }],
                          },
                        ],
                      },
                    ],
                  }
                : {}),
            };
          }),
        },
      ],
    }),
  'show lldp neighbors | display json': (m) =>
    json({
      'lldp-neighbors-information': [
        {
          'lldp-neighbor-information': m.neighbors.map((nb) => ({
            'lldp-local-port-id': d(nb.port.name),
            'lldp-local-parent-interface-name': d('-'),
            'lldp-remote-chassis-id-subtype': d('Mac address'),
            'lldp-remote-chassis-id': d(nb.remoteChassis),
            'lldp-remote-port-id-subtype': d('Interface name'),
            'lldp-remote-port-id': d(nb.remotePort),
            'lldp-remote-system-name': d(nb.remoteName),
          })),
        },
      ],
    }),
  'show arp no-resolve | display json': (m) =>
    json({
      'arp-table-information': [
        {
          'arp-table-entry': m.arp.map((a) => ({ 'mac-address': d(a.mac), 'ip-address': d(a.ip), 'interface-name': d(unit(a.iface)) })),
          'arp-entry-count': d(m.arp.length),
        },
      ],
    }),
  'show ethernet-switching table | display json': (m) =>
    json({
      'l2ng-l2ald-rtb-macdb': [
        {
          'l2ng-l2ald-mac-entry-vlan': [
            {
              'l2ng-l2-mac-routing-instance': d('default-switch'),
              'l2ng-mac-entry': m.macs.map((e) => ({
                'l2ng-l2-mac-vlan-name': d(m.vlans.find((v) => v.id === e.vlan)?.name ?? String(e.vlan)),
                'l2ng-l2-mac-address': d(e.mac),
                'l2ng-l2-mac-flags': d(e.type === 'static' ? 'S' : 'D'),
                'l2ng-l2-mac-age': d('-'),
                'l2ng-l2-mac-logical-interface': d(unit(fullName(m, e.port))),
              })),
            },
          ],
        },
      ],
    }),
  'show vlans | display json': (m) =>
    json({
      'l2ng-l2ald-vlan-instance-information': [
        {
          'l2ng-l2ald-vlan-instance-group': m.vlans.map((v) => ({
            'l2ng-l2rtb-name': d('default-switch'),
            'l2ng-l2rtb-vlan-name': d(v.name),
            'l2ng-l2rtb-vlan-tag': d(v.id),
            'l2ng-l2rtb-vlan-member': v.ports.map((p) => ({ 'l2ng-l2rtb-vlan-member-interface': d(`${unit(fullName(m, p))}*`) })),
          })),
        },
      ],
    }),
};

/** The structured discovery commands of the dialects that have them. */
export const SIM_JSON_COMMANDS: Record<string, Record<string, Render>> = { vendor_eos: EOS, vendor_nxos: NXOS, vendor_junos: JUNOS };

const REFUSED: Record<string, string> = { vendor_junos: 'syntax error.\n' };
const REFUSED_DEFAULT = "% Invalid input detected at '^' marker.\n";

for (const [deviceType, commands] of Object.entries(SIM_JSON_COMMANDS)) {
  for (const [command, render] of Object.entries(commands)) {
    registerSshCommand(deviceType, command, (ctx) =>
      SIM_TEXT_ONLY.has(ctx.hostname) ? (REFUSED[deviceType] ?? REFUSED_DEFAULT) : render(simModel(ctx.hostname, ctx.deviceType)),
    );
  }
}

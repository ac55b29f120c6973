import { describe, expect, it } from 'vitest';
import { discoveryDialect, DISCOVERY_DIALECT_TYPES } from '../../agent/src/discovery/dialects';
import { MAX_LINE_CHARS, type ParseSpec } from '../../agent/src/discovery/engine';
import { parseSection } from '../../agent/src/discovery/parse';
import { pollOverCli } from '../../agent/src/discovery/ssh-poll';
import { STRUCTURED_READERS } from '../../agent/src/discovery/structured';

/**
 * Device output is parsed on the agent's one thread, so no line a device prints may make a pattern
 * backtrack for long (a ReDoS freezes the agent: no heartbeats, no other job). These tests assert no
 * time: a pattern that backtracks exponentially again would hang them past vitest's timeout, which is
 * the failure. The port lists are the ones devices print, so the fix loses none of them.
 */

const MAC_DIALECTS = ['vendor_ios', 'vendor_xe', 'generic', 'vendor_eos'] as const;
/** The audit's line: a MAC row whose port list is a run of letters the row then rejects. */
const auditLine = (n: number) => `  10    aaaa.bbbb.cccc    DYNAMIC     ${'G'.repeat(n)}!`;

const HEADER = ['Vlan    Mac Address       Type        Ports', '----    -----------       --------    -----'];
const macTable = (...rows: string[]) => [...HEADER, ...rows, 'Total Mac Addresses for this criterion: 9'].join('\n');
const portsOf = (dialect: string, ...rows: string[]) => parseSection(dialect, 'mac', macTable(...rows)).records.map((r) => r.interface);

describe('MAC table port lists as devices print them', () => {
  it.each(MAC_DIALECTS)('%s: comma and blank, comma alone, blanks alone, CPU, wrapped lines, EOS moves', (dialect) => {
    const parsed = parseSection(
      dialect,
      'mac',
      macTable(
        ' All    0100.0ccc.cccc    STATIC      CPU',
        '  10    aabb.cc00.0100    DYNAMIC     Gi1/0/1, Gi1/0/2',
        '  10    aabb.cc00.0101    STATIC      Gi1/0/1,Gi1/0/2',
        '  20    aabb.cc00.0102    STATIC      Et1 Et2',
        // Wrapped as the Cat6500 wraps them (test/fixtures/…/cat6500-learn-age.txt).
        '  20    aabb.cc00.0103    STATIC      Et1, Et2',
        '                                      Et3, Et4,',
        '                                      Et5,Et6',
        '  20    aabb.cc00.0104    STATIC      Gi3/1,Gi3/2,Router',
        '  10    0050.5601.0001    DYNAMIC     Et1       1       5 days, 2:03:04 ago',
      ),
    );
    expect(parsed.skipped).toBe(0);
    const byMac = (mac: string) => parsed.records.filter((r) => r.mac_address === mac).map((r) => r.interface);
    expect(byMac('01:00:0c:cc:cc:cc')).toEqual(['CPU']);
    expect(parsed.records.find((r) => r.mac_address === '01:00:0c:cc:cc:cc')).toMatchObject({ vlan: null, entry_type: 'static' });
    expect(byMac('aa:bb:cc:00:01:00')).toEqual(['Gi1/0/1', 'Gi1/0/2']);
    expect(byMac('aa:bb:cc:00:01:01')).toEqual(['Gi1/0/1', 'Gi1/0/2']);
    expect(byMac('aa:bb:cc:00:01:02')).toEqual(['Et1', 'Et2']);
    expect(byMac('aa:bb:cc:00:01:03')).toEqual(['Et1', 'Et2', 'Et3', 'Et4', 'Et5', 'Et6']);
    expect(byMac('aa:bb:cc:00:01:04')).toEqual(['Gi3/1', 'Gi3/2', 'Router']);
    expect(byMac('00:50:56:01:00:01')).toEqual(['Et1']);
  });

  it('the Cat6500 and Cat2950 forms keep their ports', () => {
    expect(
      portsOf(
        'vendor_ios',
        '*  10  0011.2233.4455   dynamic  Yes          0   Gi1/1',
        '*  10  0011.2233.4456   static  No   -   ip,ipx,assigned,other   Gi1/2,Gi1/3',
        '0011.2233.4457   Dynamic   10   FastEthernet0/1',
        '0011.2233.4458   Static   10   Fa0/1 Fa0/2',
      ),
    ).toEqual(['Gi1/1', 'Gi1/2', 'Gi1/3', 'FastEthernet0/1', 'Fa0/1', 'Fa0/2']);
  });

  it('Junos VLAN members: comma, comma and blank, blanks, wrapped lines', () => {
    const text = [
      'Routing instance        VLAN name             Tag          Interfaces',
      'default-switch          v10                   10           ae1.0* ae2.0',
      '                                                           irb.10, vtep.32769*,',
      '                                                           xe-0/0/3.0 xe-0/0/4.0',
      'default-switch          v20                   20           ge-0/0/5.0,ge-0/0/6.0',
      'default-switch          v30                   30',
    ].join('\n');
    const parsed = parseSection('vendor_junos', 'vlans', text);
    expect(parsed.skipped).toBe(0);
    expect(parsed.records.map((v) => [v.vlan_id, v.interfaces])).toEqual([
      [10, ['ae1.0', 'ae2.0', 'irb.10', 'vtep.32769', 'xe-0/0/3.0', 'xe-0/0/4.0']],
      [20, ['ge-0/0/5.0', 'ge-0/0/6.0']],
      [30, []],
    ]);
  });
});

describe('device output that would make a pattern backtrack', () => {
  it.each(MAC_DIALECTS)("%s: the audit's line, under the line cap, is one line not understood", (dialect) => {
    const parsed = parseSection(dialect, 'mac', macTable(auditLine(MAX_LINE_CHARS - 100)));
    expect(parsed.records).toEqual([]);
    expect(parsed.skipped).toBe(1);
  });

  it.each(MAC_DIALECTS)("%s: the audit's line with 5,000 letters, through every MAC pattern uncut", (dialect) => {
    const spec = discoveryDialect(dialect).mac!.parse as Extract<ParseSpec, { kind: 'table' }>;
    for (const re of [...[spec.row].flat(), spec.continuation!]) {
      expect(re.exec(auditLine(5000))).toBeNull();
      expect(re.exec(' '.repeat(40) + 'G'.repeat(5000) + '!')).toBeNull();
      expect(re.exec(' '.repeat(40) + 'Gi1 '.repeat(5000) + '!')).toBeNull();
    }
  });

  it.each(MAC_DIALECTS)('%s: a 1 MB line is cut, parsed as far as it goes and reported', async (dialect) => {
    const line = auditLine(1024 * 1024);
    const parsed = parseSection(dialect, 'mac', macTable(line, '  10    aabb.cc00.0100    DYNAMIC     Gi1/0/1'));
    // The row that follows still parses; the long one counts once, as cut, whatever its first part gave.
    expect(parsed.records.map((r) => r.mac_address)).toContain('aa:bb:cc:00:01:00');
    expect(parsed.skipped).toBe(1);
    expect(parsed.samples[0]).toMatch(new RegExp(`^line 3 cut to its first ${MAX_LINE_CHARS} characters: 10 +aaaa\\.bbbb\\.cccc`));
    // And the poll reports the section as partial.
    const polled = await pollOverCli(
      { run: async (cmd) => (cmd.startsWith('show mac address-table') && !cmd.endsWith('json') ? macTable(line) : '') },
      dialect,
    );
    expect(polled.sections.find((s) => s.name === 'mac')).toMatchObject({ status: 'partial', skipped_lines: 1 });
  });

  it('every pattern of every dialect, on long runs that almost match', () => {
    const n = 5000;
    const pumps = ['G', 'Gi1 ', 'Gi1,', ' ', 'a ', '-', '1', 'ae1', 'irb', '(', ':', 'x\u2028'];
    const heads = [
      '',
      '  10    aaaa.bbbb.cccc    DYNAMIC     ',
      '*   10     0011.2233.4455   dynamic  0         F      F    ',
      'Platform: ',
      'Interface: Gi1/0/1,  Port ID (outgoing port): ',
      'ge-0/0/1           -                   00:11:22:33:44:55    ',
      'Internet  10.0.0.1   -   aabb.cc00.0100  ARPA',
      '1    default                          act/unsup',
      'default-switch          v10                   10           ',
      ' '.repeat(40),
    ];
    let tried = 0;
    for (const dialect of DISCOVERY_DIALECT_TYPES) {
      for (const section of Object.values(discoveryDialect(dialect))) {
        if (!section) continue;
        const specs: ParseSpec[] = [section.parse, ...(section.localInterfaces ? [section.localInterfaces.parse] : [])];
        for (const spec of specs) {
          const res =
            spec.kind === 'table'
              ? [...[spec.row].flat(), spec.continuation, spec.candidate, ...(spec.ignore ?? [])]
              : [spec.start, spec.end, ...(spec.opens ?? []), ...(spec.fields ?? []), ...Object.values(spec.lists ?? {}).flat()];
          for (const re of res.filter((r): r is RegExp => r !== undefined))
            for (const head of heads)
              for (const pump of pumps) {
                re.exec(head + pump.repeat(n) + '!');
                tried += 1;
              }
        }
      }
    }
    expect(tried).toBeGreaterThan(1000);
  });

  it('a whole MAC table of such lines parses, each counted', () => {
    const text = macTable(...Array.from({ length: 500 }, (_, i) => auditLine(MAX_LINE_CHARS - 60 + (i % 20))));
    const parsed = parseSection('vendor_ios', 'mac', text);
    expect(parsed.records).toEqual([]);
    expect(parsed.skipped).toBe(500);
  });

  it("NX-OS JSON: a CDP device id of a million '(' costs linear time", () => {
    const deviceId = '('.repeat(1_000_000);
    const json = {
      TABLE_cdp_neighbor_detail_info: { ROW_cdp_neighbor_detail_info: [{ device_id: deviceId, intf_id: 'Ethernet1/1', port_id: 'Gi0/1' }] },
    };
    const parsed = STRUCTURED_READERS.nxos.cdp(json);
    expect(parsed.records.map((r) => (r as { remote_name: string }).remote_name.length)).toEqual([deviceId.length]);
  });
});

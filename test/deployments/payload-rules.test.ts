/**
 * The pure rules behind the deployment checks: which rendered payloads are empty (a replace with
 * one is refused), which NETCONF elements a push replaces and whether they are empty, which
 * template targets would replace or delete the whole config, and the CLI dry run's model of
 * typing lines into a running config.
 */
import { describe, expect, it } from 'vitest';
import { applyCliLines, approximateSetLines } from '../../agent/src/jobs/cli-preview';
import { applyJunosSetLines } from '../../agent/src/jobs/junos-preview';
import { findEmptyReplaces, isEmptyPayload, type PushedPayload } from '../../controller/src/deployments/empty-payload';
import { targetProblem } from '../../controller/src/templates/target-path';

describe('isEmptyPayload', () => {
  it('finds json without a leaf empty, and json with one not', () => {
    for (const text of ['', '  \n', 'null', '[]', '{}', '{"interface": []}', '{"a": {"b": [{}, null]}}'])
      expect(isEmptyPayload(text, 'json'), text).toBe(true);
    for (const text of ['{"hostname": ""}', '{"mtu": 0}', '{"enabled": false}', '[{"name": "eth0"}]', '"x"'])
      expect(isEmptyPayload(text, 'json'), text).toBe(false);
    // Not JSON: the payload check reports that instead.
    expect(isEmptyPayload('{"a": ', 'json')).toBe(false);
  });

  it('finds xml without text content empty', () => {
    for (const text of ['<system xmlns="urn:x"/>', '<system xmlns="urn:x"><ntp></ntp></system>', '<?xml version="1.0"?><a><!-- none --><b/></a>'])
      expect(isEmptyPayload(text, 'xml'), text).toBe(true);
    for (const text of ['<system><hostname>r1</hostname></system>', '<a><![CDATA[x]]></a>']) expect(isEmptyPayload(text, 'xml'), text).toBe(false);
  });

  it('finds cli with only blank and comment lines empty', () => {
    expect(isEmptyPayload('!\n# nothing\n\n', 'cli')).toBe(true);
    expect(isEmptyPayload('!\nntp server 192.0.2.1\n', 'cli')).toBe(false);
  });
});

describe('findEmptyReplaces', () => {
  const NC = 'xmlns:nc="urn:ietf:params:xml:ns:netconf:base:1.0"';
  const xml = (rendered_config: string, operation: PushedPayload['operation'], target_path: string | null = null): PushedPayload => ({
    rendered_config,
    operation,
    target_path,
    config_format: 'xml',
  });
  /** The path each refused payload names ([] when not refused). */
  const refused = (p: PushedPayload) => findEmptyReplaces([p]).map((j) => j.target_path);

  it('checks the element a NETCONF target_path selects, not the whole fragment (its ancestors carry the list keys)', () => {
    const path = '/acls/acl[name=MGMT]/entries';
    expect(refused(xml('<acls><acl><name>MGMT</name><entries></entries></acl></acls>', 'replace', path))).toEqual([path]);
    expect(refused(xml('<acls><acl><name>MGMT</name><entries><entry><seq>10</seq></entry></entries></acl></acls>', 'replace', path))).toEqual([]);
    // Another list entry's content does not fill the selected one.
    const two = '<acls><acl><name>MGMT</name><entries/></acl><acl><name>WEB</name><entries><entry><seq>1</seq></entry></entries></acl></acls>';
    expect(refused(xml(two, 'replace', path))).toEqual([path]);
    // Merge and delete mark the selection with their own operation: never refused here.
    expect(refused(xml('<acls><acl><name>MGMT</name><entries></entries></acl></acls>', 'merge', path))).toEqual([]);
    expect(refused(xml('<acls><acl><name>MGMT</name><entries></entries></acl></acls>', 'delete', path))).toEqual([]);
  });

  it('checks each top-level element of a path-less replace, naming it', () => {
    expect(refused(xml('<system><hostname>r1</hostname></system><interfaces></interfaces>', 'replace'))).toEqual(['/interfaces']);
    expect(refused(xml('<system><hostname>r1</hostname></system>', 'replace'))).toEqual([]);
  });

  it('checks every element with an inline operation "replace", whatever the template operation; inline delete and remove pass', () => {
    const wiped = `<interfaces xmlns="urn:sb:audit" ${NC} nc:operation="replace"></interfaces>`;
    expect(refused(xml(wiped, 'merge'))).toEqual(['/interfaces']);
    const nested =
      `<system ${NC}><hostname>r1</hostname><interfaces><interface nc:operation="replace"><name>eth0</name></interface></interfaces>` +
      '<ntp nc:operation="replace"/></system>';
    expect(refused(xml(nested, 'merge'))).toEqual(['/system/ntp']);
    expect(refused(xml(`<system ${NC}><ntp nc:operation="replace"><server>192.0.2.1</server></ntp></system>`, 'merge'))).toEqual([]);
    for (const op of ['delete', 'remove']) {
      // The template's own operation is not applied to a fragment that carries operations.
      for (const operation of ['merge', 'replace'] as const)
        expect(refused(xml(`<system ${NC}><ntp nc:operation="${op}"/></system>`, operation, '/system')), `${op} ${operation}`).toEqual([]);
    }
  });

  it('checks Junos\'s own replace="replace" like an inline replace, and takes delete="delete" as the fragment\'s own operation', () => {
    // A syslog host list from a lookup that came back empty: Junos would empty syslog.
    const emptied = '<configuration><system><syslog replace="replace"></syslog></system></configuration>';
    expect(refused(xml(emptied, 'merge'))).toEqual(['/configuration/system/syslog']);
    const kept = '<configuration><system><syslog replace="replace"><host><name>192.0.2.9</name></host></syslog></system></configuration>';
    expect(refused(xml(kept, 'merge'))).toEqual([]);
    expect(refused(xml('<configuration><system><ntp delete="delete"/></system></configuration>', 'replace', '/configuration/system'))).toEqual([]);
  });

  describe('a replace that carries only the keys of the list entry its target_path selects', () => {
    const json = (rendered_config: string, operation: PushedPayload['operation'], target_path: string | null): PushedPayload => ({
      rendered_config,
      operation,
      target_path,
      config_format: 'json',
    });
    const eth0 = '/interfaces/interface[name=eth0]';

    it('refuses key-only NETCONF, its key also repeated in a config container', () => {
      expect(refused(xml('<interfaces><interface><name>eth0</name></interface></interfaces>', 'replace', eth0))).toEqual([eth0]);
      expect(
        refused(xml('<interfaces><interface><name> eth0 </name><config><name>eth0</name></config></interface></interfaces>', 'replace', eth0)),
      ).toEqual([eth0]);
      // Module prefixes on the path and the elements do not matter.
      const prefixed = '/if:interfaces/if:interface[if:name=eth0]';
      expect(
        refused(xml('<if:interfaces xmlns:if="urn:x"><if:interface><if:name>eth0</if:name></if:interface></if:interfaces>', 'replace', prefixed)),
      ).toEqual([prefixed]);
    });

    it('refuses key-only gNMI json, bare, in a config container, module-qualified or as a one-entry list', () => {
      for (const text of [
        '{"name": "eth0"}',
        '{"name": "eth0", "config": {"name": "eth0"}}',
        '{"openconfig-interfaces:name": "eth0", "openconfig-interfaces:config": {"openconfig-interfaces:name": "eth0"}}',
        '{"name": "eth0", "config": {}, "subinterfaces": {"subinterface": []}}',
        '[{"name": "eth0"}]',
      ])
        expect(refused(json(text, 'replace', eth0)), text).toEqual([eth0]);
      expect(refused(json('{"name": "eth0", "config": {"name": "eth0"}}', 'replace', `openconfig:${eth0}`))).toEqual([`openconfig:${eth0}`]);
      // The config container the target_path selects under a keyed entry: the key is its only leaf.
      expect(refused(json('{"name": "eth0"}', 'replace', `${eth0}/config`))).toEqual([`${eth0}/config`]);
    });

    it('passes the key plus one real leaf, and a key that is not the one the path names', () => {
      expect(refused(xml('<interfaces><interface><name>eth0</name><mtu>9000</mtu></interface></interfaces>', 'replace', eth0))).toEqual([]);
      expect(
        refused(xml('<interfaces><interface><name>eth0</name><config><mtu>9000</mtu></config></interface></interfaces>', 'replace', eth0)),
      ).toEqual([]);
      for (const text of [
        '{"name": "eth0", "config": {"name": "eth0", "mtu": 9000}}',
        '{"name": "eth0", "config": {"name": "eth0", "enabled": false}}',
        '{"name": "eth0", "description": ""}',
        '{"name": "eth1"}',
      ])
        expect(refused(json(text, 'replace', eth0)), text).toEqual([]);
      // Only the config container right under the entry repeats its keys; deeper a name is content.
      expect(refused(json('{"name": "eth0", "config": {"config": {"name": "eth0"}}}', 'replace', eth0))).toEqual([]);
      expect(refused(json('{"name": "eth0", "mtu": 9000}', 'replace', `${eth0}/config`))).toEqual([]);
      // A path whose last step has no key: the keys of an ancestor are content of nothing here.
      expect(refused(json('{"name": "eth0"}', 'replace', '/interfaces'))).toEqual([]);
    });

    it('passes a key-only merge (and delete): it adds the entry or changes nothing', () => {
      for (const operation of ['merge', 'delete'] as const) {
        expect(refused(xml('<interfaces><interface><name>eth0</name></interface></interfaces>', operation, eth0)), operation).toEqual([]);
        expect(refused(json('{"name": "eth0", "config": {"name": "eth0"}}', operation, eth0)), operation).toEqual([]);
      }
    });

    it('discounts every key of an entry keyed by two, and only those', () => {
      const path = '/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=bgp1]';
      const nc = (inner: string) =>
        `<network-instances><network-instance><name>default</name><protocols><protocol>${inner}</protocol></protocols></network-instance></network-instances>`;
      expect(refused(xml(nc('<identifier>BGP</identifier><name>bgp1</name>'), 'replace', path))).toEqual([path]);
      expect(
        refused(
          xml(nc('<identifier>BGP</identifier><name>bgp1</name><config><identifier>BGP</identifier><name>bgp1</name></config>'), 'replace', path),
        ),
      ).toEqual([path]);
      expect(refused(xml(nc('<identifier>BGP</identifier><name>bgp1</name><bgp><global><as>65000</as></global></bgp>'), 'replace', path))).toEqual(
        [],
      );
      expect(refused(json('{"identifier": "BGP", "name": "bgp1", "config": {"identifier": "BGP", "name": "bgp1"}}', 'replace', path))).toEqual([
        path,
      ]);
      expect(
        refused(json('{"identifier": "BGP", "name": "bgp1", "config": {"identifier": "BGP", "name": "bgp1", "enabled": true}}', 'replace', path)),
      ).toEqual([]);
      // The ancestor's key (name=default) is not a key of the replaced entry.
      expect(refused(json('{"identifier": "BGP", "name": "default"}', 'replace', path))).toEqual([]);
    });
  });

  it('keeps the whole-payload rule for json, cli, blank and malformed xml', () => {
    expect(refused({ rendered_config: '{"interface": []}', config_format: 'json', operation: 'replace', target_path: '/interfaces' })).toEqual([
      '/interfaces',
    ]);
    expect(refused({ rendered_config: '{"interface": []}', config_format: 'json', operation: 'merge', target_path: '/interfaces' })).toEqual([]);
    expect(refused({ rendered_config: '!\n', config_format: 'cli', operation: 'replace', target_path: 'ntp' })).toEqual(['ntp']);
    expect(refused(xml('  ', 'replace', '/system/ntp'))).toEqual(['/system/ntp']);
    expect(refused(xml('<system><ntp>', 'replace', '/system/ntp'))).toEqual(['/system/ntp']);
    expect(refused(xml('<system><ntp>x', 'replace', '/system/ntp'))).toEqual([]);
  });
});

describe('targetProblem', () => {
  const shape = (config_format: string, operation: string | null, target_path: string | null) => ({ config_format, operation, target_path });
  const code = (...args: Parameters<typeof shape>) => targetProblem(shape(...args))?.code ?? null;

  it('refuses a gNMI or NETCONF replace (the default) or delete with no target_path', () => {
    for (const format of ['json', 'xml'])
      for (const operation of ['replace', null, 'delete']) {
        expect(code(format, operation, null), `${format} ${operation}`).toBe('TARGET_PATH_REQUIRED');
        expect(code(format, operation, '  '), `${format} ${operation}`).toBe('TARGET_PATH_REQUIRED');
      }
    expect(targetProblem(shape('xml', 'replace', null))?.detail).toBe(
      'operation replace and no target_path, so the NETCONF push would replace each top-level element the template renders as a whole, ' +
        'removing whatever the template does not list under it. A replace needs a target_path naming the subtree it replaces, e.g. ' +
        '/interfaces/interface[name=eth0]; to add to the config without removing anything use operation merge',
    );
    // NETCONF takes a target_path that is not a path as a label and marks the top-level elements.
    expect(code('xml', 'replace', 'interfaces')).toBe('TARGET_PATH_REQUIRED');
    expect(code('json', 'replace', 'interfaces')).toBe(null);
  });

  it('refuses a replace or delete of the root on both transports', () => {
    for (const path of ['/', ' / ', 'openconfig:/', 'rfc7951:/'])
      for (const operation of ['replace', 'delete']) expect(code('json', operation, path), `${operation} ${path}`).toBe('ROOT_TARGET_REFUSED');
    expect(code('xml', 'replace', '/')).toBe('ROOT_TARGET_REFUSED');
    expect(targetProblem(shape('json', 'replace', '/'))?.detail).toMatch(
      /^operation replace on target_path '\/', the root: gNMI would replace the device's entire configuration/,
    );
  });

  it("refuses a replace or delete of a vendor's whole-configuration root, which is the root in all but name", () => {
    for (const path of ['/configuration', '/junos-conf-root:configuration', '/configure', '/native', '/Cisco-IOS-XE-native:native', '/System'])
      for (const [format, operation] of [
        ['xml', 'replace'],
        ['xml', 'delete'],
        ['json', 'replace'],
      ])
        expect(code(format, operation, path), `${format} ${operation} ${path}`).toBe('ROOT_TARGET_REFUSED');
    expect(targetProblem(shape('xml', 'replace', '/configuration'))?.detail).toMatch(
      /^operation replace on target_path '\/configuration', which holds the whole Junos configuration: the push would replace all of it\. /,
    );
    // Below the root, or a merge into it, names what it changes.
    expect(code('xml', 'replace', '/configuration/system/ntp')).toBe(null);
    expect(code('xml', 'merge', '/configuration')).toBe(null);
    expect(code('json', 'replace', '/native/interface')).toBe(null);
  });

  it('passes merges, cli templates and replaces that name their subtree', () => {
    for (const path of [null, '/', 'openconfig:/']) expect(code('json', 'merge', path)).toBe(null);
    expect(code('xml', 'merge', null)).toBe(null);
    for (const operation of ['replace', 'delete']) expect(code('cli', operation, null)).toBe(null);
    expect(code('cli', 'replace', '/')).toBe(null);
    expect(code('json', 'replace', '/interfaces/interface[name=eth0]')).toBe(null);
    expect(code('json', 'replace', 'openconfig:/interfaces')).toBe(null);
    expect(code('xml', 'delete', '/acls/acl[name=MGMT]')).toBe(null);
    // A path that does not parse is the agent's to report, not taken for the root.
    expect(code('json', 'replace', '/a[b')).toBe(null);
  });
});

const RUNNING = [
  '!',
  'hostname r1',
  '!',
  'interface GigabitEthernet0/1',
  ' description old',
  ' mtu 1500',
  '!',
  'ntp server 192.0.2.1',
  'end',
  '',
].join('\n');

describe('applyCliLines (IOS-like model)', () => {
  it('enters existing blocks, replaces single-valued settings, adds new lines before end', () => {
    const after = applyCliLines(RUNNING, 'hostname r2\ninterface GigabitEthernet0/1\n description new\n shutdown\nexit\nntp server 192.0.2.2\n');
    expect(after).toBe(
      [
        '!',
        'hostname r2',
        '!',
        'interface GigabitEthernet0/1',
        ' description new',
        ' mtu 1500',
        ' shutdown',
        '!',
        'ntp server 192.0.2.1',
        'ntp server 192.0.2.2',
        'end',
        '',
      ].join('\n'),
    );
  });

  it('removes lines and blocks with no, and changes nothing for lines already there', () => {
    expect(applyCliLines(RUNNING, 'no ntp server 192.0.2.1\ninterface GigabitEthernet0/1\n no mtu\n')).toBe(
      ['!', 'hostname r1', '!', 'interface GigabitEthernet0/1', ' description old', '!', 'end', ''].join('\n'),
    );
    expect(applyCliLines(RUNNING, 'no interface GigabitEthernet0/1\n')).not.toContain('description old');
    expect(applyCliLines(RUNNING, 'configure terminal\nntp server 192.0.2.1\nend\n')).toBe(RUNNING);
  });
});

describe('approximateSetLines', () => {
  it('adds set lines and deletes by prefix on a set-form config; appends to any other form', () => {
    const running = 'set system host-name r1\nset snmp community public authorization read-only\n';
    expect(approximateSetLines(running, 'set system host-name r1\ndelete snmp community public\nset system ntp server 192.0.2.1\ncommit\n')).toBe(
      'set system host-name r1\nset system ntp server 192.0.2.1\n',
    );
    expect(approximateSetLines('system {\n    host-name r1;\n}\n', 'set system ntp server 192.0.2.1\n')).toBe(
      'system {\n    host-name r1;\n}\nset system ntp server 192.0.2.1\n',
    );
  });
});

describe('applyJunosSetLines (braces)', () => {
  const running = [
    'version 20.4R1;',
    'system {',
    '    host-name r1;',
    '    ntp {',
    '        server 10.0.0.1;',
    '    }',
    '}',
    'interfaces {',
    '    ge-0/0/1 {',
    '        description "old"; ## note',
    '    }',
    '}',
    '',
  ].join('\n');

  it('replaces value statements, adds beside same-keyword siblings, creates named blocks, deletes', () => {
    const after = applyJunosSetLines(
      running,
      [
        'set system host-name r2',
        'set system ntp server 10.0.0.2',
        'set interfaces ge-0/0/2 unit 0 family inet address 10.2.2.2/24',
        'delete interfaces ge-0/0/1 description',
      ].join('\n'),
    );
    expect(after).toBe(
      [
        'version 20.4R1;',
        'system {',
        '    host-name r2;',
        '    ntp {',
        '        server 10.0.0.1;',
        '        server 10.0.0.2;',
        '    }',
        '}',
        'interfaces {',
        '    ge-0/0/1 {',
        '    }',
        '    ge-0/0/2 {',
        '        unit 0 {',
        '            family inet {',
        '                address 10.2.2.2/24;',
        '            }',
        '        }',
        '    }',
        '}',
        '',
      ].join('\n'),
    );
    // Setting what is there changes nothing, comments included.
    expect(applyJunosSetLines(running, 'set system ntp server 10.0.0.1\nset interfaces ge-0/0/1 description "old"\n')).toBe(running);
  });
});

/**
 * The pure rules behind two deployment checks: which rendered payloads are empty (a replace with
 * one is refused), and the CLI dry run's model of typing lines into a running config.
 */
import { describe, expect, it } from 'vitest';
import { applyCliLines, approximateSetLines } from '../../agent/src/jobs/cli-preview';
import { applyJunosSetLines } from '../../agent/src/jobs/junos-preview';
import { isEmptyPayload } from '../../controller/src/deployments/empty-payload';

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

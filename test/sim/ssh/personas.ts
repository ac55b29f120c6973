/**
 * How each simulated device type behaves: prompts, enable, pager style, pager-off commands,
 * config mode, error messages, config format. Written from the devices' point of view and
 * independently of the driver's dialect table, so a wrong table entry fails the tests.
 */
import { CONFIG_STYLES, xrClock, iosClock, type ConfigStyle } from './configs';

export type Mode = 'user' | 'priv' | 'config';

export interface Persona {
  deviceType: string;
  startMode: 'user' | 'priv';
  /** Prompt for a mode; `context` is the config sub-mode (`config-if`, `interface`, ...). */
  prompt(host: string, user: string, mode: Mode, context: string): string;
  /** Printed before every prompt (Junos `{master:0}` status line, `[edit …]` banner); `context` as for prompt(). */
  beforePrompt?: (mode: Mode, context: string) => string;
  banner(host: string): string;
  /** Enable command; undefined when the CLI has none. */
  enableCommand?: string;
  /** Commands that turn the pager off (words may be abbreviated as usual). */
  pagerOff: Record<string, string>;
  pager: { prompt: string; erase: string };
  /** The command that enters config mode; absent: the CLI has none (FortiOS-like, see fortios-config.ts). */
  configEnter?: { command: string; text: string; context: string };
  /** In config mode: commands that leave config mode entirely. */
  configEnd: string[];
  /** `configure replace <file> [option …]` at the privileged prompt: the options it takes, what it prints when done. */
  configReplace?: { options: string[]; done: string };
  showConfig: string;
  showVersion: { command: string; text(host: string, now: Date): string };
  /** Error text for an unknown command typed at a prompt of `promptLen` characters. */
  error(line: string, promptLen: number): string;
  /** Printed before the output of every exec command (XR timestamp). */
  outputPrefix?: (now: Date) => string;
  /** IOS-like line editors: `?` typed anywhere prints this help at once (and a tab completes); absent: both are text. */
  lineHelp?: string;
  config: ConfigStyle;
  /** Optional config-mode behaviour (sub-contexts); returns text to print or undefined for silence. */
  configLine?(line: string, state: { context: string[]; pagerOn: boolean }): string | undefined;
}

const caret = (promptLen: number, text: string) => `${' '.repeat(promptLen)}^\n${text}\n`;

const uptime = (host: string, now: Date) => {
  const m = Math.floor(now.getTime() / 60_000) % 100_000;
  return `${host} uptime is ${Math.floor(m / 1440)} days, ${Math.floor(m / 60) % 24} hours, ${m % 60} minutes`;
};

function ciscoPersona(
  deviceType: string,
  o: {
    startMode: 'user' | 'priv';
    hostPrefix?: string;
    enable?: boolean;
    pager: { prompt: string; erase: string };
    pagerOff: Record<string, string>;
    error: (line: string, promptLen: number) => string;
    config: ConfigStyle;
    version: (host: string, now: Date) => string;
    outputPrefix?: (now: Date) => string;
    configReplace?: Persona['configReplace'];
  },
): Persona {
  const pre = o.hostPrefix ?? '';
  return {
    deviceType,
    startMode: o.startMode,
    prompt: (h, _u, mode, ctx) => (mode === 'user' ? `${pre}${h}>` : mode === 'priv' ? `${pre}${h}#` : `${pre}${h}(${ctx})#`),
    banner: () => '\n**************************************\n* Authorized access only             *\n**************************************\n\n',
    enableCommand: o.enable ? 'enable' : undefined,
    pagerOff: o.pagerOff,
    pager: o.pager,
    configEnter: { command: 'configure terminal', text: 'Enter configuration commands, one per line.  End with CNTL/Z.\n', context: 'config' },
    configEnd: ['end'],
    configReplace: o.configReplace ?? { options: ['force'], done: 'Total number of passes: 1\nRollback Done\n\n' },
    showConfig: 'show running-config',
    showVersion: { command: 'show version', text: o.version },
    error: o.error,
    outputPrefix: o.outputPrefix,
    lineHelp: '  LINE  Text, up to 240 characters\n  <cr>',
    config: o.config,
    configLine(line, state) {
      const w = line.trim().split(/\s+/);
      if (w[0] === 'exit') {
        state.context.pop();
        return undefined;
      }
      if (w[0] === 'interface' || w[0] === 'int') state.context.splice(1, Infinity, 'config-if');
      else if (w[0] === 'router') state.context.splice(1, Infinity, 'config-router');
      else if (w[0] === 'line') state.context.splice(1, Infinity, 'config-line');
      else if (w[0] === 'vlan') state.context.splice(1, Infinity, 'config-vlan');
      return undefined;
    },
  };
}

const IOS_PAGER = { prompt: ' --More-- ', erase: '\b\b\b\b\b\b\b\b\b\b          \b\b\b\b\b\b\b\b\b\b' };
const iosError = (_l: string, n: number) => caret(n, "% Invalid input detected at '^' marker.") + '\n';

const iosVersion = (model: string, ver: string) => (h: string, now: Date) =>
  [
    `Cisco-like IOS Software, ${model} Software, Version ${ver}, RELEASE SOFTWARE (fc2)`,
    'Technical Support: http://www.example.net/techsupport',
    'ROM: Bootstrap program is IOS-like',
    '',
    uptime(h, now),
    'System returned to ROM by power-on',
    `System restarted at ${iosClock(new Date(now.getTime() - 86_400_000))}`,
    `System image file is "flash:${model.toLowerCase()}-universalk9-mz.${ver}.bin"`,
    '',
    `${model} (revision 1.0) with 524288K/65536K bytes of memory.`,
    'Processor board ID FOC1234X0AB',
    '48 Gigabit Ethernet interfaces',
    'Configuration register is 0x2102',
  ].join('\n') + '\n';

export const PERSONAS: Record<string, Persona> = {
  vendor_ios: ciscoPersona('vendor_ios', {
    startMode: 'user',
    enable: true,
    pager: IOS_PAGER,
    pagerOff: { 'terminal length 0': '', 'terminal width 0': '' },
    error: iosError,
    config: CONFIG_STYLES.ios,
    version: iosVersion('C2960X', '15.2(7)E8'),
  }),
  vendor_xe: ciscoPersona('vendor_xe', {
    startMode: 'user',
    enable: true,
    pager: IOS_PAGER,
    pagerOff: { 'terminal length 0': '', 'terminal width 0': '' },
    error: iosError,
    config: CONFIG_STYLES.xe,
    version: iosVersion('C9300', '17.9.4a'),
  }),
  vendor_nxos: ciscoPersona('vendor_nxos', {
    startMode: 'priv',
    // Reverse-video pager erased with CR + erase-line.
    pager: { prompt: '\x1b[7m--More--\x1b[27m', erase: '\r\x1b[K' },
    pagerOff: { 'terminal length 0': '', 'terminal width 511': '' },
    error: (_l, n) => caret(n, "% Invalid command at '^' marker.") + '\n',
    config: CONFIG_STYLES.nxos,
    version: (h, now) =>
      [
        'Cisco-like Nexus Operating System (NX-OS) Software',
        'Software',
        '  BIOS: version 05.45',
        '  NXOS: version 9.3(8)',
        '',
        'Hardware',
        '  cisco Nexus9000 C93180YC-EX chassis',
        `  Device name: ${h}`,
        '',
        `Kernel uptime is ${Math.floor(now.getTime() / 86_400_000) % 1000} day(s), 3 hour(s), 4 minute(s), ${now.getUTCSeconds()} second(s)`,
      ].join('\n') + '\n',
  }),
  vendor_xr: ciscoPersona('vendor_xr', {
    startMode: 'priv',
    hostPrefix: 'RP/0/RP0/CPU0:',
    pager: IOS_PAGER,
    pagerOff: { 'terminal length 0': '', 'terminal width 0': '' },
    error: iosError,
    config: CONFIG_STYLES.xr,
    outputPrefix: (now) => `\n${xrClock(now)}\n`,
    version: (h, now) =>
      [
        'Cisco-like IOS XR Software, Version 7.5.2',
        'Copyright (c) 2013-2022 by Example Systems, Inc.',
        '',
        'Build Information:',
        ' Built By     : builder',
        ' Built On     : Tue Jun 14 10:00:00 PDT 2022',
        '',
        `cisco ASR9K () processor`,
        uptime(h, now),
      ].join('\n') + '\n',
  }),
  vendor_junos: {
    deviceType: 'vendor_junos',
    startMode: 'priv',
    prompt: (h, u, mode) => `${u}@${h}${mode === 'config' ? '#' : '>'} `,
    beforePrompt: (mode, ctx) => (mode === 'config' ? `\n[${ctx || 'edit'}]\n` : '\n{master:0}\n'),
    banner: () => '--- JUNOS 21.4R3.15 Kernel 64-bit  JNPR-12.1-20220101.abcdef_buil\n',
    pagerOff: { 'set cli screen-length 0': 'Screen length set to 0\n', 'set cli screen-width 0': 'Screen width set to 0\n' },
    pager: { prompt: '---(more 42%)---', erase: '\r                                        \r' },
    configEnter: { command: 'configure', text: 'Entering configuration mode\n', context: 'edit' },
    configEnd: ['exit configuration-mode', 'exit', 'quit'],
    showConfig: 'show configuration',
    showVersion: {
      command: 'show version',
      text: (h) =>
        [`Hostname: ${h}`, 'Model: mx204', 'Junos: 21.4R3.15', 'JUNOS OS Kernel 64-bit  [20220101.abcdef_builder_stable_12]'].join('\n') + '\n',
    },
    error: (_l, n) => caret(n, 'unknown command.'),
    config: CONFIG_STYLES.junos,
    // Config mode: junos-config.ts (set/delete/commit on a shared candidate).
  },
  vendor_eos: ciscoPersona('vendor_eos', {
    startMode: 'user',
    enable: true,
    pager: { prompt: ' --More-- ', erase: '\r\x1b[K' },
    pagerOff: { 'terminal length 0': 'Pagination disabled.\n', 'terminal width 32767': 'Width set to 32767 columns.\n' },
    error: () => '% Invalid input\n',
    // EOS: `configure replace <url> [ignore-errors] [md5 <sum>] [skip-checkpoint]`, no `force`; it asks nothing.
    configReplace: { options: ['ignore-errors', 'skip-checkpoint'], done: '' },
    config: CONFIG_STYLES.eos,
    version: (h, now) =>
      [
        'Arista-like DCS-7050SX3-48YC8',
        'Hardware version: 11.00',
        'Serial number: JPE12345678',
        'Software image version: 4.28.3M',
        'Architecture: x86_64',
        '',
        `Uptime: ${Math.floor(now.getTime() / 60_000) % 100_000} minutes`,
        `Total memory: 8099732 kB`,
        `Hostname: ${h}`,
      ].join('\n') + '\n',
  }),
  vendor_panos: {
    deviceType: 'vendor_panos',
    startMode: 'priv',
    prompt: (h, u, mode) => `${u}@${h}${mode === 'config' ? '#' : '>'} `,
    beforePrompt: (mode) => (mode === 'config' ? '\n[edit]\n' : '\n'),
    banner: () => 'Last login: Mon Jan  1 00:00:00 2024 from 10.0.0.1\n\nNumber of failed attempts since last successful login: 0\n\n',
    pagerOff: { 'set cli pager off': '', 'set cli scripting-mode on': '' },
    // less-like pager with an inverse-video status line
    pager: { prompt: '\x1b[7mlines 1-23 \x1b[27m', erase: '\r\x1b[K' },
    configEnter: { command: 'configure', text: 'Entering configuration mode\n', context: 'edit' },
    configEnd: ['exit', 'quit'],
    showConfig: 'show config running',
    showVersion: {
      command: 'show system info',
      text: (h, now) =>
        [
          `hostname: ${h}`,
          'ip-address: 10.0.0.10',
          'model: PA-3220',
          'serial: 012345678901',
          'sw-version: 10.2.4',
          `time: ${now.toUTCString()}`,
          `uptime: 12 days, ${now.getUTCHours()}:${now.getUTCMinutes()}:${now.getUTCSeconds()}`,
        ].join('\n') + '\n',
    },
    error: (l) => `Unknown command: ${l.trim().split(/\s+/).pop()}\n`,
    config: CONFIG_STYLES.panos,
  },
  vendor_fw: {
    deviceType: 'vendor_fw',
    startMode: 'priv',
    prompt: (h, _u, mode, ctx) => (mode === 'config' ? `${h} (${ctx}) # ` : `${h} # `),
    banner: () => '',
    pagerOff: {},
    pager: { prompt: '--More-- ', erase: '\r         \r' },
    // No configuration mode: `config …` blocks are opened at the top-level prompt (fortios-config.ts).
    configEnd: [],
    showConfig: 'show',
    showVersion: {
      command: 'get system status',
      text: (h, now) =>
        [
          'Version: FortiGate-like-60F v7.2.5,build1517,230606 (GA.F)',
          'Serial-Number: FGT60FTK12345678',
          `Hostname: ${h}`,
          'Operation Mode: NAT',
          `System time: ${now.toUTCString()}`,
        ].join('\n') + '\n',
    },
    error: (l) => `command parse error before '${l.trim().split(/\s+/)[0]}'\nCommand fail. Return code -61\n`,
    config: CONFIG_STYLES.fortios,
  },
  generic: {
    ...ciscoPersona('generic', {
      startMode: 'priv',
      pager: { prompt: '--More--', erase: '\r        \r' },
      pagerOff: { 'terminal length 0': '' },
      error: (l) => `% Unknown command: ${l.trim()}\n`,
      config: CONFIG_STYLES.generic,
      version: (h, now) => [`Generic network OS 1.0`, `Hostname: ${h}`, uptime(h, now)].join('\n') + '\n',
    }),
  },
};
PERSONAS.custom = { ...PERSONAS.generic, deviceType: 'custom' };

export function getPersona(deviceType: string): Persona {
  const p = PERSONAS[deviceType];
  if (!p) throw new Error(`ssh simulator: unknown device type '${deviceType}' (known: ${Object.keys(PERSONAS).join(', ')})`);
  return p;
}

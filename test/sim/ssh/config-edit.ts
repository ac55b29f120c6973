/**
 * What configuration mode does to an IOS-like running config (ios, xe, nxos, eos, xr, generic):
 * the config is top-level lines, each with its indented sub-lines. A line that opens a sub-mode
 * (`interface X`, `router ospf 1`) finds or creates its block; lines in a sub-mode go into that
 * block; `no X` removes; single-valued settings (hostname, description, ip address, ...) are
 * replaced rather than repeated. Lines whose first word the CLI does not know are refused.
 */

const TOP_LEVEL = new Set([
  'aaa',
  'access-list',
  'archive',
  'banner',
  'boot',
  'boot-start-marker',
  'boot-end-marker',
  'cdp',
  'class-map',
  'clock',
  'control-plane',
  'crypto',
  'default',
  'dot1x',
  'enable',
  'errdisable',
  'event',
  'feature',
  'hostname',
  'interface',
  'ip',
  'ipv4',
  'ipv6',
  'key',
  'license',
  'line',
  'lldp',
  'logging',
  'mac',
  'management',
  'monitor',
  'ntp',
  'platform',
  'policy-map',
  'radius-server',
  'route-map',
  'router',
  'service',
  'snmp-server',
  'spanning-tree',
  'ssh',
  'tacacs-server',
  'transceiver',
  'username',
  'version',
  'vlan',
  'vrf',
  'domain',
]);
const SUB_LEVEL = new Set([
  'access-class',
  'address-family',
  'bandwidth',
  'bgp',
  'channel-group',
  'description',
  'duplex',
  'encapsulation',
  'exec-timeout',
  'group',
  'load-interval',
  'logging',
  'login',
  'max-lsa',
  'mtu',
  'name',
  'neighbor',
  'network',
  'passive-interface',
  'password',
  'permit',
  'deny',
  'redistribute',
  'remark',
  'remote-as',
  'router-id',
  'secret',
  'shutdown',
  'speed',
  'standby',
  'switchport',
  'spanning-tree',
  'transport',
  'vrf',
  'vrrp',
  'ip',
  'ipv4',
  'ipv6',
  'area',
  'default-information',
  'timers',
  'exit-address-family',
]);
/** Settings that hold one value: setting one again replaces it. Key = the words before the value. */
const SINGLE_TOP = [/^hostname /, /^ip domain name /, /^snmp-server location /, /^clock timezone /];
const SINGLE_SUB = [
  /^description /,
  /^mtu /,
  /^name /,
  /^ip address /,
  /^ipv4 address /,
  /^switchport mode /,
  /^switchport access vlan /,
  /^speed /,
  /^duplex /,
  /^router-id /,
  /^bgp router-id /,
  /^load-interval /,
  /^bandwidth /,
];

export type EditResult = { ok: true } | { ok: false };

const indentOf = (l: string) => /^\s*/.exec(l)![0].length;
const isBlockLine = (l: string) => l.trim() !== '' && indentOf(l) > 0;

export class CiscoConfigEditor {
  /** Index-free pointer: the header of the block sub-mode lines go to. */
  private block?: string;

  constructor(private lines: string[]) {}

  static parse(body: string): CiscoConfigEditor {
    return new CiscoConfigEditor(body.replace(/\n$/, '').split('\n'));
  }

  text(): string {
    return this.lines.join('\n') + '\n';
  }

  /** Whether the CLI knows the line's first word (after an optional `no`) at this level. */
  static known(line: string, inSubMode: boolean): boolean {
    const words = line.trim().split(/\s+/);
    const first = words[0] === 'no' || words[0] === 'default' ? words[1] : words[0];
    if (first === undefined) return false;
    return TOP_LEVEL.has(first) || (inSubMode && SUB_LEVEL.has(first));
  }

  /** A line that belongs to the sub-mode the CLI is in (otherwise a top-level line ends the sub-mode). */
  static subLine(line: string): boolean {
    const words = line.trim().split(/\s+/);
    return SUB_LEVEL.has(words[0] === 'no' ? words[1] : words[0]);
  }

  /**
   * Applies one config-mode line. `opensBlock`: the CLI entered a sub-mode with it; `inSubMode`:
   * the CLI was in a sub-mode when it was typed (and stays there).
   */
  apply(raw: string, opts: { opensBlock: boolean; inSubMode: boolean }): void {
    const line = raw.trim();
    if (line === '' || line.startsWith('!')) return;
    if (line === 'exit') {
      this.block = undefined;
      return;
    }
    if (opts.opensBlock) {
      const negated = /^no\s+(.*)$/.exec(line);
      if (negated) {
        this.removeTop(negated[1]);
        this.block = undefined;
        return;
      }
      if (!this.lines.includes(line)) this.insertTop([line]);
      this.block = line;
      return;
    }
    if (opts.inSubMode && this.block !== undefined) return this.applySub(line);
    this.block = undefined;
    const negated = /^no\s+(.*)$/.exec(line);
    if (negated) return this.removeTop(negated[1]);
    // Any top-level line may head a block: indented lines typed after it (pasted config) go under it.
    this.block = line;
    if (this.lines.includes(line)) return;
    const single = SINGLE_TOP.find((re) => re.test(line));
    const at = single ? this.lines.findIndex((l) => indentOf(l) === 0 && single.test(l)) : -1;
    if (at >= 0) this.lines[at] = line;
    else this.insertTop([line]);
  }

  hasBlock(): boolean {
    return this.block !== undefined;
  }

  private applySub(line: string): void {
    const start = this.lines.indexOf(this.block!);
    if (start < 0) return;
    let end = start + 1;
    while (end < this.lines.length && isBlockLine(this.lines[end])) end++;
    const children = this.lines.slice(start + 1, end);
    const indent = children[0] ? /^\s*/.exec(children[0])![0] : this.defaultIndent();
    const negated = /^no\s+(.*)$/.exec(line);
    if (negated) {
      const target = negated[1];
      const i = children.findIndex((c) => c.trim() === target || (SINGLE_SUB.find((re) => re.test(target))?.test(c.trim()) ?? false));
      if (i >= 0) this.lines.splice(start + 1 + i, 1);
      return;
    }
    if (children.some((c) => c.trim() === line)) return;
    const single = SINGLE_SUB.find((re) => re.test(line));
    const i = single ? children.findIndex((c) => single.test(c.trim())) : -1;
    if (i >= 0) this.lines[start + 1 + i] = indent + line;
    else this.lines.splice(end, 0, indent + line);
  }

  private defaultIndent(): string {
    const sample = this.lines.find(isBlockLine);
    return sample ? /^\s*/.exec(sample)![0] : ' ';
  }

  private removeTop(target: string): void {
    const i = this.lines.findIndex((l) => indentOf(l) === 0 && (l === target || (target === 'hostname' && l.startsWith('hostname '))));
    if (i < 0) return;
    let end = i + 1;
    while (end < this.lines.length && isBlockLine(this.lines[end])) end++;
    this.lines.splice(i, end - i);
  }

  /** New top-level lines go before the final `end`, when the config has one. */
  private insertTop(lines: string[]): void {
    const last = this.lines.length - 1;
    const at = last >= 0 && this.lines[last].trim() === 'end' ? last : this.lines.length;
    this.lines.splice(at, 0, ...lines);
  }
}

/**
 * gNMI path strings (openconfig "gNMI path conventions"):
 *
 *   [origin:]/elem/elem[key=value][key2=value2]/elem
 *
 * - elements are separated by '/'; inside an element name '/', '[', ']' and '\' are escaped
 *   with a backslash;
 * - inside a key value '/' needs no escaping, ']' and '\' must be escaped ('\]', '\\'), and
 *   every '=' after the first belongs to the value;
 * - "origin:/path" sets the origin when the text before ":/" holds no '/', '[' or ']' (a
 *   module-prefixed element such as "/openconfig-interfaces:interfaces" follows a '/' and is
 *   therefore never taken for an origin).
 */

export interface PathElem {
  name: string;
  key: Record<string, string>;
}

export interface GnmiPath {
  origin?: string;
  elem: PathElem[];
}

export class PathSyntaxError extends Error {
  constructor(path: string, at: number, what: string) {
    super(`bad path ${JSON.stringify(path)} at ${at}: ${what}`);
    this.name = 'PathSyntaxError';
  }
}

export function parsePath(input: string): GnmiPath {
  const trimmed = input.trim();
  const origin = originOf(trimmed);
  const path = origin !== undefined ? trimmed.slice(origin.length + 1) : trimmed;
  // Error positions count in the input as given: its leading blanks and origin included.
  const base = input.length - input.trimStart().length + (origin !== undefined ? origin.length + 1 : 0);
  const elem = new PathReader(input, path, base).elements();
  return origin !== undefined ? { origin, elem } : { elem };
}

/** "origin:/path" — the origin is everything before the first ":/" when no '/' or '[' precedes it. */
function originOf(s: string): string | undefined {
  const end = s.indexOf(':/');
  return end > 0 && !s.startsWith('/') && !/[/[\]]/.test(s.slice(0, end)) ? s.slice(0, end) : undefined;
}

/** Reads the elements of a path (after its origin) from left to right, one character at a time. */
class PathReader {
  private i: number;

  constructor(
    private readonly input: string,
    private readonly s: string,
    private readonly base: number,
  ) {
    this.i = s.startsWith('/') ? 1 : 0;
  }

  elements(): PathElem[] {
    const elem: PathElem[] = [];
    while (this.i < this.s.length) {
      const name = this.name();
      elem.push({ name, key: this.keys() });
      if (this.i < this.s.length) {
        if (this.s[this.i] !== '/') this.fail(`expected '/' after element ${name}`);
        this.i++;
        if (this.i === this.s.length) break; // trailing slash
      }
    }
    return elem;
  }

  /** An element name: up to the next '/' or '[' that is not escaped. */
  private name(): string {
    let name = '';
    while (this.i < this.s.length && this.s[this.i] !== '/' && this.s[this.i] !== '[') {
      if (this.s[this.i] === ']') this.fail("unexpected ']'");
      name += this.char();
    }
    if (name === '') this.fail('empty element name');
    return name;
  }

  /** The element's keys, "[k=v]" after "[k=v]". */
  private keys(): Record<string, string> {
    const key: Record<string, string> = {};
    while (this.i < this.s.length && this.s[this.i] === '[') {
      this.i++;
      const k = this.keyName();
      const v = this.value(k);
      if (k in key) this.fail(`duplicate key ${k}`);
      key[k] = v;
    }
    return key;
  }

  /** A key's name, and the '=' after it. */
  private keyName(): string {
    let k = '';
    while (this.i < this.s.length && this.s[this.i] !== '=') {
      const c = this.s[this.i];
      if (c === ']' || c === '[' || c === '/') this.fail(`unexpected '${c}' in key name`);
      k += this.char();
    }
    if (this.i >= this.s.length) this.fail("missing '=' in key");
    if (k.trim() === '') this.fail('empty key name');
    this.i++; // '='
    return k;
  }

  /** A key's value: up to the first ']' that is not escaped, which closes the key. */
  private value(k: string): string {
    let v = '';
    while (this.i < this.s.length) {
      if (this.s[this.i] === ']') {
        this.i++;
        return v;
      }
      v += this.char();
    }
    return this.fail(`unterminated key [${k}=...`);
  }

  /** The next character, unescaped: a '\' stands for the character after it. */
  private char(): string {
    if (this.s[this.i] === '\\') {
      this.i++;
      if (this.i >= this.s.length) this.fail('dangling escape');
    }
    return this.s[this.i++];
  }

  private fail(what: string): never {
    throw new PathSyntaxError(this.input, this.base + this.i, what);
  }
}

function escapeName(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\//g, '\\/').replace(/\[/g, '\\[').replace(/]/g, '\\]');
}

function escapeValue(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/]/g, '\\]');
}

/** The string form of a path; parsePath(formatPath(p)) gives p back. Keys sorted by name. */
export function formatPath(p: GnmiPath): string {
  const body =
    '/' +
    p.elem
      .map(
        (e) =>
          escapeName(e.name) +
          Object.keys(e.key)
            .sort()
            .map((k) => `[${escapeName(k)}=${escapeValue(e.key[k])}]`)
            .join(''),
      )
      .join('/');
  return p.origin ? `${p.origin}:${body}` : body;
}

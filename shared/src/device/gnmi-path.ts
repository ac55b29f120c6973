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
  let s = input.trim();
  let origin: string | undefined;
  // "origin:/path" — the origin is everything before the first ":/" when no '/' or '[' precedes it.
  const originEnd = s.indexOf(':/');
  if (originEnd > 0 && !s.startsWith('/') && !/[/[\]]/.test(s.slice(0, originEnd))) {
    origin = s.slice(0, originEnd);
    s = s.slice(originEnd + 1);
  }
  const elem: PathElem[] = [];
  let i = s.startsWith('/') ? 1 : 0;
  const base = input.length - input.trimStart().length + (origin !== undefined ? origin.length + 1 : 0);
  const err = (what: string): never => {
    throw new PathSyntaxError(input, base + i, what);
  };
  while (i < s.length) {
    // element name
    let name = '';
    while (i < s.length && s[i] !== '/' && s[i] !== '[') {
      if (s[i] === ']') err("unexpected ']'");
      if (s[i] === '\\') {
        i++;
        if (i >= s.length) err('dangling escape');
      }
      name += s[i];
      i++;
    }
    if (name === '') err('empty element name');
    const key: Record<string, string> = {};
    while (i < s.length && s[i] === '[') {
      i++;
      let k = '';
      while (i < s.length && s[i] !== '=') {
        if (s[i] === ']' || s[i] === '[' || s[i] === '/') err(`unexpected '${s[i]}' in key name`);
        if (s[i] === '\\') {
          i++;
          if (i >= s.length) err('dangling escape');
        }
        k += s[i];
        i++;
      }
      if (i >= s.length) err("missing '=' in key");
      if (k.trim() === '') err('empty key name');
      i++; // '='
      let v = '';
      let closed = false;
      while (i < s.length) {
        const c = s[i];
        if (c === '\\') {
          i++;
          if (i >= s.length) err('dangling escape');
          v += s[i];
          i++;
          continue;
        }
        if (c === ']') {
          closed = true;
          i++;
          break;
        }
        v += c;
        i++;
      }
      if (!closed) err(`unterminated key [${k}=...`);
      if (k in key) err(`duplicate key ${k}`);
      key[k] = v;
    }
    elem.push({ name, key });
    if (i < s.length) {
      if (s[i] !== '/') err(`expected '/' after element ${name}`);
      i++;
      if (i === s.length) break; // trailing slash
    }
  }
  return origin !== undefined ? { origin, elem } : { elem };
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

/**
 * A JSON (RFC 7951 / JSON_IETF) data tree addressed by gNMI paths: keyed path elements select
 * entries of JSON lists (arrays of objects) by their key leaves, as in OpenConfig. Member
 * names match with or without a module prefix ("openconfig-interfaces:interfaces" ~ "interfaces").
 */
import type { PathElem } from './path';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export class TreeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TreeError';
  }
}

export function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function local(name: string): string {
  const i = name.indexOf(':');
  return i < 0 ? name : name.slice(i + 1);
}

/**
 * Names come from the device (paths, JSON members): only own members count, and `__proto__` is
 * written as a member, so no name reaches Object.prototype or an object's prototype.
 */
function own(obj: JsonObject, name: string): Json | undefined {
  return Object.hasOwn(obj, name) ? obj[name] : undefined;
}

function put(obj: JsonObject, name: string, value: Json): void {
  if (name === '__proto__') Object.defineProperty(obj, name, { value, writable: true, enumerable: true, configurable: true });
  else obj[name] = value;
}

/** The member of `obj` that `name` refers to (exact first, then by local name). */
export function memberName(obj: JsonObject, name: string): string | undefined {
  if (Object.hasOwn(obj, name)) return name;
  const want = local(name);
  return Object.keys(obj).find((k) => local(k) === want);
}

/**
 * A key value as a path names it against the entry's: RFC 7951 writes an identity with its module
 * (`openconfig-policy-types:BGP`), which a path may name without it (`identifier=BGP`). Only a
 * module-like prefix counts, so `2001:db8::1` is never taken for `db8::1`.
 */
function keyValueMatches(actual: string, wanted: string): boolean {
  if (actual === wanted) return true;
  const colon = actual.indexOf(':');
  return !wanted.includes(':') && colon > 0 && /^[A-Za-z_][\w.-]*$/.test(actual.slice(0, colon)) && actual.slice(colon + 1) === wanted;
}

function entryMatches(entry: Json, key: Record<string, string>): boolean {
  if (!isObject(entry)) return false;
  return Object.entries(key).every(([k, v]) => {
    const m = memberName(entry, k);
    return m !== undefined && keyValueMatches(String(entry[m]), v);
  });
}

function describe(elems: PathElem[], upto: number): string {
  return (
    '/' +
    elems
      .slice(0, upto + 1)
      .map(
        (e) =>
          e.name +
          Object.entries(e.key)
            .map(([k, v]) => `[${k}=${v}]`)
            .join(''),
      )
      .join('/')
  );
}

/** Value at the path, or undefined. */
export function getAt(tree: Json, elems: PathElem[]): Json | undefined {
  let cur: Json | undefined = tree;
  for (const e of elems) {
    if (!isObject(cur)) return undefined;
    const m = memberName(cur, e.name);
    if (m === undefined) return undefined;
    cur = cur[m];
    if (Object.keys(e.key).length > 0) {
      if (!Array.isArray(cur)) return undefined;
      cur = cur.find((x) => entryMatches(x, e.key));
    }
  }
  return cur;
}

/**
 * getAt for putting a subtree back: a member named by its local name only must be the only one of
 * that name (a target may hold `ietf-interfaces:interfaces` and `openconfig-interfaces:interfaces`),
 * and so must the list entry a key selects. Answers the value (undefined: not there), or throws
 * TreeError naming the ambiguous element.
 */
export function getUnique(tree: Json, elems: PathElem[]): Json | undefined {
  let cur: Json | undefined = tree;
  for (const [i, e] of elems.entries()) {
    if (!isObject(cur)) return undefined;
    const names: string[] = Object.hasOwn(cur, e.name) ? [e.name] : Object.keys(cur).filter((k) => local(k) === local(e.name));
    if (names.length > 1) throw new TreeError(`${describe(elems, i)} names ${names.join(' and ')}; write the module prefix`);
    if (names.length === 0) return undefined;
    cur = cur[names[0]];
    if (Object.keys(e.key).length > 0) {
      if (!Array.isArray(cur)) return undefined;
      const entries: Json[] = cur.filter((x) => entryMatches(x, e.key));
      if (entries.length > 1) throw new TreeError(`${describe(elems, i)} selects ${entries.length} list entries`);
      cur = entries[0];
    }
  }
  return cur;
}

/** Deep merge for update semantics: objects merge member-wise, lists merge entries by "name". */
export function deepMerge(base: Json | undefined, patch: Json): Json {
  if (isObject(base) && isObject(patch)) {
    const out: JsonObject = { ...base };
    for (const [k, v] of Object.entries(patch)) {
      const m = memberName(out, k) ?? k;
      put(out, m, deepMerge(own(out, m), v));
    }
    return out;
  }
  if (Array.isArray(base) && Array.isArray(patch) && [...base, ...patch].every((x) => isObject(x) && memberName(x, 'name') !== undefined)) {
    const out = [...base];
    for (const p of patch as JsonObject[]) {
      const key = { name: String(p[memberName(p, 'name')!]) };
      const i = out.findIndex((x) => entryMatches(x, key));
      if (i >= 0) out[i] = deepMerge(out[i], p);
      else out.push(p);
    }
    return out;
  }
  return patch;
}

function withKeys(value: Json, key: Record<string, string>): Json {
  if (!isObject(value)) return value;
  const out: JsonObject = { ...value };
  for (const [k, v] of Object.entries(key)) if (memberName(out, k) === undefined) put(out, k, v);
  return out;
}

/**
 * Write `value` at the path (replace, or update = deep merge), creating containers and list
 * entries on the way. Returns the new root; the input tree is not modified.
 */
export function setAt(tree: Json, elems: PathElem[], value: Json, mode: 'replace' | 'update'): Json {
  if (elems.length === 0) {
    if (mode === 'replace') return structuredClone(value);
    return deepMerge(tree, value);
  }
  const root: Json = isObject(tree) ? structuredClone(tree) : {};
  let parent = root as JsonObject;
  elems.forEach((e, i) => {
    const last = i === elems.length - 1;
    const m = memberName(parent, e.name) ?? e.name;
    const keyed = Object.keys(e.key).length > 0;
    if (keyed) {
      const existing = own(parent, m);
      if (existing !== undefined && !Array.isArray(existing)) throw new TreeError(`${describe(elems, i)}: ${m} is not a list`);
      const list: Json[] = existing ?? [];
      put(parent, m, list);
      let idx = list.findIndex((x) => entryMatches(x, e.key));
      if (last) {
        const next = withKeys(mode === 'replace' ? structuredClone(value) : deepMerge(idx >= 0 ? list[idx] : {}, value), e.key);
        if (idx >= 0) list[idx] = next;
        else list.push(next);
        return;
      }
      if (idx < 0) {
        list.push({ ...e.key });
        idx = list.length - 1;
      }
      parent = list[idx] as JsonObject;
      return;
    }
    if (last) {
      put(parent, m, mode === 'replace' ? structuredClone(value) : deepMerge(own(parent, m), value));
      return;
    }
    if (own(parent, m) === undefined) put(parent, m, {});
    const next = own(parent, m);
    if (!isObject(next)) throw new TreeError(`${describe(elems, i)} is not a container`);
    parent = next;
  });
  return root;
}

/** Remove the node at the path; returns the new root (unchanged copy when nothing matched). */
export function deleteAt(tree: Json, elems: PathElem[]): Json {
  if (elems.length === 0) return {};
  const root = structuredClone(tree);
  let parent: Json | undefined = root;
  for (let i = 0; i < elems.length; i++) {
    const e = elems[i];
    if (!isObject(parent)) return root;
    const m = memberName(parent, e.name);
    if (m === undefined) return root;
    const last = i === elems.length - 1;
    if (Object.keys(e.key).length > 0) {
      const list: Json = parent[m];
      if (!Array.isArray(list)) return root;
      const idx = list.findIndex((x) => entryMatches(x, e.key));
      if (idx < 0) return root;
      if (last) {
        list.splice(idx, 1);
        return root;
      }
      parent = list[idx];
    } else {
      if (last) {
        delete parent[m];
        return root;
      }
      parent = parent[m];
    }
  }
  return root;
}

/** Stable text: object members sorted by name, two-space indentation, trailing newline. */
export function canonicalJson(value: Json): string {
  const sortDeep = (v: Json): Json => {
    if (Array.isArray(v)) return v.map(sortDeep);
    if (isObject(v)) {
      const out: JsonObject = {};
      for (const k of Object.keys(v).sort()) put(out, k, sortDeep(v[k]));
      return out;
    }
    return v;
  };
  return JSON.stringify(sortDeep(value), null, 2) + '\n';
}

/**
 * The variables a template reads, derived from its syntax tree: a for-loop iterable is a list, an
 * attribute lookup an object, arithmetic a number; a name is required unless defaulted or guarded.
 */
import { BLOCKED, GLOBALS } from './sandbox';
import { childrenOf, isNode, type AstNode } from './syntax';

export type VariableType = 'string' | 'number' | 'boolean' | 'list' | 'object';
export interface TemplateVariable {
  name: string;
  type: VariableType;
  required: boolean;
}

type Role = 'value' | 'iter' | 'lookup' | 'number' | 'list' | 'object' | 'cond';
interface Mode {
  optional: boolean;
  cond: boolean;
}
const LIST_FILTERS = new Set(['join', 'sort', 'batch', 'first', 'last', 'selectattr', 'rejectattr', 'select', 'reject', 'groupby', 'sum', 'slice']);
const NUMBER_OPS = new Set(['Sub', 'Mul', 'Div', 'FloorDiv', 'Mod', 'Pow', 'Neg', 'Pos']);
const TYPE_ORDER: VariableType[] = ['list', 'object', 'number', 'string', 'boolean'];

/**
 * Walks the syntax tree collecting free names (not set, looped or macro arguments). A name is
 * required when at least one use would fail or do nothing without it: not under `| default`,
 * not inside `x is defined` or an if condition, and not inside an if whose condition proves it
 * defined (`{% if x %}`, `{% if x is defined %}`, the else branch of `{% if x is undefined %}`).
 */
class VariableCollector {
  private readonly found = new Map<string, { roles: Set<Role>; required: boolean }>();
  private readonly scopes: Set<string>[] = [new Set()];
  private readonly guards: Set<string>[] = [];

  result(): TemplateVariable[] {
    return [...this.found].map(([name, info]) => {
      const roles = info.roles;
      let type: VariableType = 'boolean';
      if (roles.has('iter') || roles.has('list')) type = 'list';
      else if (roles.has('lookup') || roles.has('object')) type = 'object';
      else if (roles.has('number')) type = 'number';
      else if (roles.has('value')) type = 'string';
      return { name, type: TYPE_ORDER.includes(type) ? type : 'string', required: info.required };
    });
  }

  private bound(name: string): boolean {
    return this.scopes.some((scope) => scope.has(name));
  }

  private bind(target: unknown): void {
    if (Array.isArray(target)) target.forEach((t) => this.bind(t));
    else if (isNode(target)) {
      if (target.typename === 'Symbol') this.scopes[this.scopes.length - 1].add(String(target.value));
      else if (target.children) this.bind(target.children);
    }
  }

  private use(name: string, role: Role, mode: Mode): void {
    if (this.bound(name) || GLOBALS.has(name) || BLOCKED.has(name)) return;
    const info = this.found.get(name) ?? { roles: new Set<Role>(), required: false };
    this.found.set(name, info);
    const guarded = this.guards.some((g) => g.has(name));
    info.roles.add(mode.cond && role === 'value' ? 'cond' : role);
    if (!mode.optional && !mode.cond && !guarded) info.required = true;
  }

  /** Names a true condition proves defined. */
  private provenIfTrue(cond: AstNode): Set<string> {
    const out = new Set<string>();
    const root = (n: AstNode): string | null =>
      n.typename === 'Symbol' ? String(n.value) : n.typename === 'LookupVal' ? root(n.target as AstNode) : null;
    const walk = (n: AstNode) => {
      if (n.typename === 'Symbol' || n.typename === 'LookupVal') {
        const name = root(n);
        if (name) out.add(name);
      } else if (n.typename === 'Is' && (n.right as AstNode).value === 'defined') {
        const name = root(n.left as AstNode);
        if (name) out.add(name);
      } else if (n.typename === 'And') {
        walk(n.left as AstNode);
        walk(n.right as AstNode);
      } else if (n.typename === 'Not') {
        for (const name of this.provenIfFalse(n.target as AstNode)) out.add(name);
      } else if (n.typename === 'Group' && n.children?.length === 1) walk(n.children[0]);
    };
    walk(cond);
    return out;
  }

  /** Names a false condition proves defined. */
  private provenIfFalse(cond: AstNode): Set<string> {
    const out = new Set<string>();
    const walk = (n: AstNode) => {
      if (n.typename === 'Is' && (n.right as AstNode).value === 'undefined' && (n.left as AstNode).typename === 'Symbol')
        out.add(String((n.left as AstNode).value));
      else if (n.typename === 'Or') {
        walk(n.left as AstNode);
        walk(n.right as AstNode);
      } else if (n.typename === 'Not') {
        for (const name of this.provenIfTrue(n.target as AstNode)) out.add(name);
      } else if (n.typename === 'Group' && n.children?.length === 1) walk(n.children[0]);
    };
    walk(cond);
    return out;
  }

  private guarded(names: Set<string>, fn: () => void): void {
    this.guards.push(names);
    try {
      fn();
    } finally {
      this.guards.pop();
    }
  }

  private scoped(fn: () => void): void {
    this.scopes.push(new Set());
    try {
      fn();
    } finally {
      this.scopes.pop();
    }
  }

  visit(node: unknown, mode: Mode = { optional: false, cond: false }, role: Role = 'value'): void {
    if (Array.isArray(node)) {
      for (const n of node) this.visit(n, mode, role);
      return;
    }
    if (!isNode(node)) return;
    const n = node;
    const condMode = { optional: true, cond: true };
    switch (n.typename) {
      case 'Symbol':
        this.use(String(n.value), role, mode);
        return;
      case 'Literal':
      case 'TemplateData':
        return;
      case 'LookupVal':
        this.visit(n.target, mode, 'lookup');
        this.visit(n.val, mode);
        return;
      case 'FunCall':
        if ((n.name as AstNode).typename !== 'Symbol') this.visit(n.name, mode);
        this.visit(n.args, mode);
        return;
      case 'Filter':
      case 'FilterAsync': {
        const name = String((n.name as AstNode).value);
        const [first, ...rest] = (n.args as AstNode).children ?? [];
        const firstRole: Role = LIST_FILTERS.has(name) ? 'list' : name === 'dictsort' ? 'object' : role;
        this.visit(first, name === 'default' || name === 'd' ? { ...mode, optional: true } : mode, firstRole);
        this.visit(rest, mode);
        return;
      }
      case 'Is': {
        this.visit(n.left, { ...mode, optional: true });
        // The right side names a test; only a call's arguments hold expressions.
        const right = n.right as AstNode;
        if (right.typename === 'FunCall') this.visit(right.args, mode);
        return;
      }
      case 'Or':
        this.visit(n.left, { ...mode, optional: true });
        this.visit(n.right, mode, role);
        return;
      case 'If':
      case 'InlineIf':
      case 'IfAsync': {
        const cond = n.cond as AstNode;
        this.visit(cond, condMode);
        this.guarded(this.provenIfTrue(cond), () => this.visit(n.body, mode, role));
        this.guarded(this.provenIfFalse(cond), () => this.visit(n.else_, mode, role));
        return;
      }
      case 'For':
      case 'AsyncEach':
      case 'AsyncAll':
        this.visit(n.arr, mode, 'iter');
        this.scoped(() => {
          this.bind(n.name);
          this.scopes[this.scopes.length - 1].add('loop');
          this.visit(n.body, mode);
        });
        this.visit(n.else_, mode);
        return;
      case 'Macro':
      case 'Caller': {
        if (n.typename === 'Macro') this.bind(n.name);
        const args = (n.args as AstNode).children ?? [];
        for (const arg of args) if (arg.typename === 'KeywordArgs') for (const pair of arg.children ?? []) this.visit(pair.value, mode);
        this.scoped(() => {
          for (const arg of args) {
            if (arg.typename === 'KeywordArgs') for (const pair of arg.children ?? []) this.bind(pair.key);
            else this.bind(arg);
          }
          this.scopes[this.scopes.length - 1].add('caller');
          this.visit(n.body, mode);
        });
        return;
      }
      case 'Set':
        this.visit(n.value, mode);
        this.visit(n.body, mode);
        this.bind(n.targets);
        return;
      case 'Pair':
        // Keys of dict literals and keyword arguments are names, not variables.
        if ((n.key as AstNode).typename !== 'Symbol') this.visit(n.key, mode);
        this.visit(n.value, mode);
        return;
      default:
        if (NUMBER_OPS.has(n.typename)) {
          for (const child of childrenOf(n)) this.visit(child, mode, child.typename === 'Symbol' ? 'number' : 'value');
          return;
        }
        for (const child of childrenOf(n)) this.visit(child, mode);
    }
  }
}

/** The variables of a parsed template. */
export function templateVariables(ast: AstNode): TemplateVariable[] {
  const collector = new VariableCollector();
  collector.visit(ast);
  return collector.result();
}

/**
 * The required variables `given` leaves out (absent or null). Checked before rendering: a missing
 * list renders as an empty one, and an empty replace would wipe the target.
 */
export function missingRequired(variables: readonly TemplateVariable[], given: Record<string, unknown>): string[] {
  return variables.filter((v) => v.required && (given[v.name] === undefined || given[v.name] === null)).map((v) => v.name);
}

/** `'a'` or `'a', 'b'` for a message. */
export function quoteNames(names: readonly string[]): string {
  return names.map((n) => `'${n}'`).join(', ');
}

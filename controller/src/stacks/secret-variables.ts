import { appError } from '../errors/app-error';

/**
 * Variables whose name says they hold a secret: `password`, `enable_secret`, `snmp_community`,
 * `tacacs_key`, `api_token`, `psk`, `passphrase` … An operator who may not reveal a device's
 * secrets (configs.secrets) must not read them in what a deployment, an instance or a stack
 * stored either, so their values are shown as masks, and masked wherever a rendered config holds
 * them. Matched on the name of the member holding the value, at any depth (shared_vars,
 * device_vars, a service's default variables).
 */
const SECRET_NAME = /password|passwd|passphrase|secret|community|token|psk|credential|(^|[_-])(pass|key)($|[_-])/i;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

type Visit = (value: string | number, path: string[]) => unknown;

/** A copy of `value` with each primitive under a secret-named member replaced by what `visit` gives. */
function mapSecrets(value: unknown, visit: Visit, path: string[] = [], secret = false): unknown {
  if (Array.isArray(value)) return value.map((v, i) => mapSecrets(v, visit, [...path, String(i)], secret));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, mapSecrets(v, visit, [...path, k], secret || isSecretName(k))]),
    );
  }
  return secret && (typeof value === 'string' || typeof value === 'number') ? visit(value, path) : value;
}

const KEYED_MASK = /^<secret:[0-9a-f]{8}>$/;

function valueAt(root: unknown, path: string[]): unknown {
  let at = root;
  for (const step of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[step];
  }
  return at;
}

/**
 * How stacks, instances and deployments show and take back their secret variables, with the
 * configs' keyed mask (`<secret:xxxxxxxx>`): the same value gets the same mask as in a stored config.
 */
export class SecretVariables {
  constructor(private readonly mask: (value: string) => string) {}

  /** `values` as shown: each secret-named variable's value as its mask. */
  shown<T>(values: T): T {
    return mapSecrets(values, (v) => this.mask(String(v))) as T;
  }

  /** The values of the secret-named variables, to mask wherever a rendered config holds them. */
  values(values: unknown): string[] {
    const found = new Set<string>();
    mapSecrets(values, (v) => found.add(String(v)));
    return [...found];
  }

  /**
   * `incoming` (a record read masked, edited and sent back) with each secret-named variable that
   * still holds its mask given back the stored value the mask stands for, so saving an edit keeps
   * the secrets. A mask that is not the stored value's is refused: stored, it would replace the
   * secret. `where` names the field in the message.
   */
  kept<T>(incoming: T, stored: unknown, where: string): T {
    return mapSecrets(incoming, (v, path) => {
      if (typeof v !== 'string' || !KEYED_MASK.test(v)) return v;
      const was = valueAt(stored, path);
      if ((typeof was === 'string' || typeof was === 'number') && this.mask(String(was)) === v) return was;
      throw appError(
        'SECRET_MASK_NOT_STORED',
        `${[where, ...path].join('.')} holds the mask ${v}, which is not the stored value's: send the value itself`,
      );
    }) as T;
  }

  /** Refuses a mask in a secret-named variable where there is no stored value for it to stand for. */
  refuseMasks(values: unknown, where: string): void {
    this.kept(values, undefined, where);
  }
}

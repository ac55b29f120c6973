import { byLength, secretValuePattern } from '../../../shared/src/secrets/value-pattern';
import { appError } from '../errors/app-error';

/**
 * Variables whose name says they hold a secret: `password`, `enable_secret`, `snmp_community`,
 * `tacacs_key`, `apiToken`, `psk`, `passphrase` … An operator who may not reveal a device's
 * secrets (configs.secrets) must not read them in what a deployment, an instance or a stack
 * stored either, so their values are shown as masks, and masked wherever a rendered config or a
 * log line holds them. Matched on the name of the member holding the value, at any depth
 * (shared_vars, device_vars, a service's default variables), camelCase read as snake_case.
 *
 * Not a wall against a template author: a template may write a secret transformed (joined,
 * encoded) where no mask finds it, and the device's config then holds it; template authors are
 * trusted with the values their templates render.
 */
const SECRET_NAME = /password|passwd|passphrase|secret|communit(y|ies)|token|psk|credential|(^|_)(pass|keys?)(_|$)/;
/**
 * About a secret, not one (`ssh_key_type`, `key_id`, `key_length`), or public by nature
 * (`public_key`, `host_key`, a BGP community, a key chain's name).
 */
const NOT_SECRET = /_(type|id|length|len|size|algorithm|mode)$|(^|_)(public|host)_keys?($|_)|(^|_)bgp_communit|(^|_)key_chain/;

export function isSecretName(name: string): boolean {
  const snake = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/-/g, '_')
    .toLowerCase();
  return SECRET_NAME.test(snake) && !NOT_SECRET.test(snake);
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

  /** `text` with each of `secrets` (values()) as its mask, found as the agent finds them (secretValuePattern). */
  hide(text: string, secrets: string[]): string {
    const pattern = text === '' ? undefined : secretValuePattern(...byLength(secrets));
    return pattern ? text.replace(pattern, (value) => this.mask(value)) : text;
  }

  /**
   * `incoming` (a record read masked, edited and sent back) with each secret-named variable that
   * still holds a mask given back the stored value the mask stands for: one stored under a member
   * of the same name, here or elsewhere in the record (services reordered keep their secrets), so
   * saving an edit keeps the secrets. A mask of no such value is refused: stored or pushed, it
   * would replace the secret (and a mask moved to another variable would put one secret where a
   * template may show it). `where` names the field in the message.
   */
  kept<T>(incoming: T, stored: unknown, where: string): T {
    const byName = new Map<string, Map<string, string | number>>();
    mapSecrets(stored, (v, path) => {
      const name = path.at(-1) ?? '';
      byName.set(name, (byName.get(name) ?? new Map<string, string | number>()).set(this.mask(String(v)), v));
      return v;
    });
    return mapSecrets(incoming, (v, path) => {
      if (typeof v !== 'string' || !KEYED_MASK.test(v)) return v;
      const was = byName.get(path.at(-1) ?? '')?.get(v);
      if (was !== undefined) return was;
      throw appError(
        'SECRET_MASK_NOT_STORED',
        `${[where, ...path].join('.')} holds the mask ${v}, which stands for no value stored under that name: send the value itself`,
      );
    }) as T;
  }

  /** Refuses a mask in a secret-named variable where there is no stored value for it to stand for. */
  refuseMasks(values: unknown, where: string): void {
    this.kept(values, undefined, where);
  }
}

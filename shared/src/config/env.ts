/**
 * Reading settings from the environment, shared by the controller and the agent: each bad value
 * becomes one error naming the variable, raised as the caller's own config error class.
 */
export type ConfigErrorClass = new (message: string) => Error;

export function intFrom(Err: ConfigErrorClass, env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Err(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return value;
}

/** A URL (or comma-separated URLs) with one of the given protocols, as written; null when unset. */
export function urlFrom(Err: ConfigErrorClass, env: NodeJS.ProcessEnv, name: string, protocols: string[]): string | null {
  const raw = env[name];
  if (!raw) return null;
  for (const part of raw.split(',')) {
    let url: URL;
    try {
      url = new URL(part.trim());
    } catch {
      throw new Err(`${name} is not a valid URL: "${part}"`);
    }
    if (!protocols.includes(url.protocol)) throw new Err(`${name} must use ${protocols.join(' or ')}, got "${url.protocol}"`);
  }
  return raw;
}

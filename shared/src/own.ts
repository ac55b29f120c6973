/**
 * A record's own entry for a key that came from outside: `record[key]` would also find
 * inherited members such as `constructor` or `toString` and treat them as entries.
 */
export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** PostgreSQL error classes the inventory stores turn into catalogue errors. */
function pgCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null ? (err as { code?: string }).code : undefined;
}

/** A unique constraint refused the row (e.g. a duplicate name within an organization). */
export const isUniqueViolation = (err: unknown): boolean => pgCode(err) === '23505';

/** A foreign key refused the change (e.g. a row another area still references). */
export const isForeignKeyViolation = (err: unknown): boolean => pgCode(err) === '23503';

/**
 * Runs a write and maps a unique violation to onTaken(), and a foreign key violation (a row
 * referenced by the body vanished after it was checked) to onMissingReference(constraint).
 */
export async function uniqueOr<T>(write: () => Promise<T>, onTaken: () => Error, onMissingReference?: (constraint: string) => Error): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw onTaken();
    if (onMissingReference && isForeignKeyViolation(err)) throw onMissingReference(String((err as { constraint?: string }).constraint ?? ''));
    throw err;
  }
}

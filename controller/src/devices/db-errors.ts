/** PostgreSQL error classes the inventory stores turn into catalogue errors. */
function pgCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null ? (err as { code?: string }).code : undefined;
}

/** A unique constraint refused the row (e.g. a duplicate name within an organization). */
export const isUniqueViolation = (err: unknown): boolean => pgCode(err) === '23505';

/** A foreign key refused the change (e.g. a row another area still references). */
export const isForeignKeyViolation = (err: unknown): boolean => pgCode(err) === '23503';

/** Runs a write and maps a unique violation to the given error. */
export async function uniqueOr<T>(write: () => Promise<T>, onTaken: () => Error): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw onTaken();
    throw err;
  }
}

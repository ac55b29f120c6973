import type { Db } from '../../controller/src/db/knex';

/** Columns that change without any request asking (agent heartbeats). */
const VOLATILE_COLUMNS = ['last_seen_at'];
/** A refused sign-in is meant to leave a trace: the lockout counts it and the audit log says so. */
const EXPECTED_TRACES: Record<string, string> = {
  failed_logins: 'false',
  audit_log: "t.kind NOT IN ('auth.login_failed', 'auth.password_change_failed')",
};

/**
 * One digest of every row of every table, to show that a refused request changed nothing.
 * Cheap on a test database (a few hundred rows); not for production sizes.
 */
export async function dbFingerprint(db: Db): Promise<string> {
  const tables: { table_name: string }[] = (
    await db.raw("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1")
  ).rows;
  const volatile = VOLATILE_COLUMNS.map((c) => `'${c}'`).join(', ');
  const parts = tables.map(({ table_name: name }) => {
    const where = EXPECTED_TRACES[name] ?? 'true';
    return (
      `SELECT '${name}' AS t, count(*) AS n, md5(coalesce(string_agg(md5((to_jsonb(t) - ARRAY[${volatile}])::text), ',' ORDER BY ` +
      `md5((to_jsonb(t) - ARRAY[${volatile}])::text)), '')) AS h FROM "${name}" t WHERE ${where}`
    );
  });
  const rows: { t: string; n: string; h: string }[] = (await db.raw(parts.join(' UNION ALL '))).rows;
  return rows
    .sort((a, b) => a.t.localeCompare(b.t))
    .map((r) => `${r.t}:${r.n}:${r.h}`)
    .join('\n');
}

/** The tables whose digest differs between two fingerprints (for a readable failure). */
export function changedTables(before: string, after: string): string[] {
  const old = new Set(before.split('\n'));
  return after
    .split('\n')
    .filter((line) => !old.has(line))
    .map((line) => line.split(':')[0]);
}

import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { hashPassword } from './auth/passwords';
import type { Db } from './db/knex';

export const DEFAULT_ORG_NAME = 'Default';

/**
 * First start: the default organization and the bootstrap platform administrator. Runs in a
 * transaction under an advisory lock so two controllers starting together create them once.
 */
export async function bootstrap(db: Db, admin: { username: string; password: string | null }, log: Logger): Promise<{ defaultOrgId: string }> {
  // Set inside the transaction callback, which control-flow narrowing does not see into.
  let printedPassword = null as string | null;
  const defaultOrgId = await db.transaction(async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', ['switchboard.bootstrap']);
    let org = await trx('organizations').where({ is_default: true }).first('id');
    if (!org) [org] = await trx('organizations').insert({ name: DEFAULT_ORG_NAME, is_default: true }).returning('id');
    const anyAdmin = await trx('users').where({ is_platform_admin: true }).first('id');
    if (!anyAdmin) {
      const password = admin.password ?? randomBytes(12).toString('base64url');
      if (!admin.password) printedPassword = password;
      await trx('users').insert({
        home_org_id: org.id,
        username: admin.username,
        display_name: 'Platform administrator',
        password_hash: await hashPassword(password),
        roles: ['platform_admin'],
        is_platform_admin: true,
      });
      log.info({ username: admin.username }, 'created the bootstrap platform administrator');
    } else if (admin.password) {
      log.warn(
        'SWITCHBOARD_ADMIN_PASSWORD was ignored: the platform administrator already exists (the variable is read on the first start only). ' +
          'Change the password with PUT /api/auth/password signed in as that user, or have another administrator set one with PUT /api/admin/users/:id',
      );
    }
    return org.id as string;
  });
  if (printedPassword) {
    // Printed once, to the console only, never to the structured log.
    process.stdout.write(
      `\nSwitchboard admin account created.\n  username: ${admin.username}\n  password: ${printedPassword}\nChange it with PUT /api/auth/password.\n\n`,
    );
  }
  return { defaultOrgId };
}

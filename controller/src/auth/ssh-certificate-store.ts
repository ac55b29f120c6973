import type { Db } from '../db/knex';

/** The SQL of SSH user certificates: the record of each one issued and the revoked ones still valid. */
export class SshCertificateStore {
  constructor(private readonly db: Db) {}

  async record(row: { serial: string; user_id: string; session_id: string; key_id: string; valid_until: Date }): Promise<void> {
    await this.db('ssh_certificates').insert(row);
  }

  /** Forgets certificates expired for over a day (sshd checks the dates; the day covers clock skew). */
  async pruneExpired(): Promise<void> {
    await this.db('ssh_certificates').where('valid_until', '<', this.db.raw("now() - interval '1 day'")).delete();
  }

  /** Serials (hex) of revoked certificates still inside their validity, and when the latest revocation was. */
  async revoked(): Promise<{ serials: string[]; latest: Date | null }> {
    const rows: { serial: string }[] = await this.db('ssh_certificates')
      .whereNotNull('revoked_at')
      .where('valid_until', '>', this.db.fn.now())
      .select('serial');
    const [{ latest }] = await this.db('ssh_certificates').max({ latest: 'revoked_at' });
    return { serials: rows.map((r) => r.serial), latest: latest ? new Date(latest) : null };
  }
}

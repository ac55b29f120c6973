/** A backup event of /api/live (migration 182), as the device page uses it. */
export interface BackupProgress {
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  error: string | null;
}

/** Whether the backup ended (its versions are stored and can be listed). */
export const backupEnded = (p: BackupProgress) => p.status === 'succeeded' || p.status === 'failed';

/** What the device page says while a backup of the device goes on. */
export function backupProgressText(p: BackupProgress): string {
  switch (p.status) {
    case 'queued':
      return 'Backup queued: waiting for an agent…';
    case 'running':
      return 'Backup running: the agent is connecting to the device…';
    case 'succeeded':
      return 'Backup finished: the new version is listed below.';
    case 'failed':
      return `Backup failed: ${p.error ?? 'no reason given'}. The failed attempt is listed below.`;
  }
}

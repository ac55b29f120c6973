import { hkdfSync } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { JobService } from '../jobs/types';
import { snapshotRoutes } from '../snapshots/routes';
import { SnapshotService } from '../snapshots/service';
import { SnapshotStore } from '../snapshots/store';
import { backupDeviceRoutes } from './device-routes';
import { configRoutes } from './routes';
import { secretMasker } from './config-secrets';
import { ConfigService } from './service';
import { ConfigStore } from './store';
import { backupResultSummary } from './backup-job';

/** Also closes runs whose last two devices finished at the same instant, so keep it short. */
const SWEEP_INTERVAL_MS = 2_000;

export interface BackupServices {
  configs: ConfigService;
  snapshots: SnapshotService;
}

/**
 * Config backups and snapshots: builds their services (app.services.configs / .snapshots),
 * records 'backup' and 'test_credential' outcomes, ends overdue snapshot runs, and mounts
 * /api/config/devices, /api/devices/snapshots and the backup routes under /api/devices.
 */
export async function configsArea(app: FastifyInstance): Promise<void> {
  const { db, secrets } = app.services;
  const log = app.log.child({ area: 'configs' });
  const mask = secretMasker(Buffer.from(hkdfSync('sha256', app.services.config.secretKey, 'switchboard', 'config-secret-mask', 32)));
  const configs = new ConfigService(new ConfigStore(db), new SnapshotStore(db), secrets, () => app.services.jobs as JobService | undefined, log, { mask, audit: app.services.audit });
  const snapshots = new SnapshotService(new SnapshotStore(db), configs, log, app.services.audit);
  app.services.configs = configs;
  app.services.snapshots = snapshots;

  let handlersOn = false;
  const attach = () => {
    const jobs = app.services.jobs as JobService | undefined;
    if (handlersOn || !jobs) return;
    jobs.onOutcome(
      'backup',
      async (outcome, trx) => {
        await configs.recordBackup(outcome, trx);
      },
      { storedResult: backupResultSummary, handleMany: async (outcomes, trx) => void (await configs.recordBackups(outcomes, trx)) },
    );
    // Credential tests are answered from jobs.wait; there is nothing to store.
    jobs.onOutcome('test_credential', async () => undefined);
    handlersOn = true;
  };
  attach();
  app.addHook('onReady', async () => {
    attach();
    if (!handlersOn) log.warn('no job service: pulls and snapshots cannot run');
  });

  let timer: NodeJS.Timeout | null = null;
  const sweep = () =>
    snapshots.sweep().then(
      (ended) => ended && log.info({ ended }, 'closed snapshot collections (all devices reported, or deadline passed)'),
      (err) => log.error({ err }, 'snapshot sweep failed'),
    );
  app.addHook('onReady', async () => {
    void sweep(); // a restart finishes what was overdue while the controller was down
    timer = setInterval(sweep, SWEEP_INTERVAL_MS);
    timer.unref();
  });
  app.addHook('onClose', async () => {
    if (timer) clearInterval(timer);
  });

  await app.register(async (scope) => {
    // POST bodies here may be empty ("empty object or optional timeout_seconds"): read "" as {}.
    const json = scope.getDefaultJsonParser('error', 'error');
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
      (body === '' ? done(null, {}) : json(request, body as string, done)),
    );
    scope.addHook('preValidation', async (request) => {
      if (request.method === 'POST' && request.body === undefined) request.body = {};
    });
    await scope.register(configRoutes, { prefix: '/api/config/devices', configs, snapshots });
    await scope.register(snapshotRoutes, { prefix: '/api/devices/snapshots', configs, snapshots });
    await scope.register(backupDeviceRoutes, { prefix: '/api/devices', configs, snapshots });
  });
}

import type { FastifyInstance } from 'fastify';
import { snapshotRoutes } from './snapshot-routes';
import type { SnapshotService } from './snapshot-service';
import { backupDeviceRoutes } from './device-routes';
import { configRoutes } from './routes';
import type { ConfigService } from './service';

export interface BackupServices {
  configs: ConfigService;
  snapshots: SnapshotService;
}

/**
 * Config backups and snapshots (built, with their outcome handlers and sweep, in the composition
 * root): mounts /api/config/devices, /api/devices/snapshots and the backup routes under /api/devices.
 */
export async function configsArea(app: FastifyInstance): Promise<void> {
  const { configs, snapshots } = app.services;
  await app.register(async (scope) => {
    // POST bodies here may be empty ("empty object or optional timeout_seconds"): the app's JSON
    // parser (plugins/validation.ts, with its value count and heap budget) reads "" as no body, and
    // no body is {} here.
    scope.addHook('preValidation', async (request) => {
      if (request.method === 'POST' && request.body === undefined) request.body = {};
    });
    await scope.register(configRoutes, { prefix: '/api/config/devices', configs, snapshots });
    await scope.register(snapshotRoutes, { prefix: '/api/devices/snapshots', configs, snapshots });
    await scope.register(backupDeviceRoutes, { prefix: '/api/devices', configs, snapshots });
  });
}

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
    // POST bodies here may be empty ("empty object or optional timeout_seconds"): read "" as {}.
    const json = scope.getDefaultJsonParser('error', 'error');
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
      body === '' ? done(null, {}) : json(request, body as string, done),
    );
    scope.addHook('preValidation', async (request) => {
      if (request.method === 'POST' && request.body === undefined) request.body = {};
    });
    await scope.register(configRoutes, { prefix: '/api/config/devices', configs, snapshots });
    await scope.register(snapshotRoutes, { prefix: '/api/devices/snapshots', configs, snapshots });
    await scope.register(backupDeviceRoutes, { prefix: '/api/devices', configs, snapshots });
  });
}

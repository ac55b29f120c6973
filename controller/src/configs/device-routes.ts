import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IdParams, errorResponses } from '../http/schemas';
import { caller } from '../auth/route-guard';
import type { BackupServices } from './area';
import { BulkTestBody, CredentialResults, DevicesWithBackup, TestCredentialResult, WithBackupQuery } from './schemas';

const tags = ['devices'];
const config = { permission: 'devices.access' } as const;

/**
 * The backup-related device routes under /api/devices. The inventory area owns every other
 * /api/devices path; these are static or distinct so the two never overlap.
 */
export async function backupDeviceRoutes(parent: FastifyInstance, { configs }: BackupServices): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/:id/test-credential',
    {
      config,
      schema: {
        tags,
        summary: "Check that the device's credentials log in (connect and authenticate only)",
        params: IdParams,
        response: { 200: TestCredentialResult, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => (await configs.testCredentials(caller(request), [request.params.id])).results[0],
  );

  app.post(
    '/bulk/test-credentials',
    {
      config,
      schema: {
        tags,
        summary: 'Check the credentials of many devices at once (up to 500)',
        body: BulkTestBody,
        response: { 200: CredentialResults, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => configs.testCredentials(caller(request), request.body.device_ids),
  );

  app.get(
    '/with-backup-info',
    {
      config,
      schema: {
        tags,
        summary: 'Devices with their newest backup and newest successful backup',
        querystring: WithBackupQuery,
        response: { 200: DevicesWithBackup, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { limit = 50, offset = 0, ...filter } = request.query;
      return configs.withBackupInfo(caller(request).orgId, filter, limit, offset);
    },
  );
}

import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IdParams } from '../http/schemas';
import type { BackupServices } from './area';
import { caller } from '../auth/route-guard';
import {
  BackupList,
  BackupLog,
  CollectBody,
  CollectResult,
  ConfigIdParams,
  CreateSnapshotBody,
  SnapshotEnvelope,
  SnapshotList,
  SnapshotListQuery,
  plainErrors,
} from './snapshot-schemas';

const tags = ['snapshots'];
const config = { permission: 'devices.access', plainTextErrors: true } as const;

/** Snapshots under /api/devices/snapshots; every error is plain text (API.md). */
export async function snapshotRoutes(parent: FastifyInstance, { snapshots }: BackupServices): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/',
    {
      config,
      schema: {
        tags,
        summary: 'Snapshots of the organization, newest first',
        querystring: SnapshotListQuery,
        response: { 200: SnapshotList, ...plainErrors(400, 401, 403) },
      },
    },
    async (request) => snapshots.store.list(caller(request).orgId, request.query.limit ?? 50, request.query.offset ?? 0),
  );

  app.post(
    '/',
    {
      config,
      schema: {
        tags,
        summary: 'Define a snapshot: a name and a device filter',
        body: CreateSnapshotBody,
        response: { 201: SnapshotEnvelope, ...plainErrors(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const { name, device_filter, method } = request.body;
      return reply.code(201).send({ snapshot: await snapshots.create(caller(request), name.trim() || name, device_filter, method ?? 'cli') });
    },
  );

  app.get(
    '/:id',
    {
      config,
      schema: {
        tags,
        summary: 'One snapshot with its status and device counts',
        params: IdParams,
        response: { 200: SnapshotEnvelope, ...plainErrors(400, 401, 403, 404) },
      },
    },
    async (request) => ({ snapshot: await snapshots.get(caller(request).orgId, request.params.id) }),
  );

  app.delete(
    '/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Delete a snapshot (its stored config versions stay, without the snapshot link)',
        params: IdParams,
        response: { 204: { type: 'null' }, ...plainErrors(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await snapshots.delete(caller(request), request.params.id);
      return reply.code(204).send();
    },
  );

  // collect and recollect-failed: same body and answer, different device choice.
  const collectRoute = (path: string, summary: string, description: string, run: typeof snapshots.collect, what: string) =>
    app.post(
      path,
      {
        config,
        schema: {
          tags,
          summary,
          description,
          params: IdParams,
          body: CollectBody,
          response: { 202: CollectResult, ...plainErrors(400, 401, 403, 404, 409, 503) },
        },
      },
      async (request, reply) => {
        const started = await run.call(snapshots, caller(request), request.params.id, request.body.timeout_seconds);
        return reply
          .code(202)
          .send({ message: `Collecting ${started.devices_queued} ${what}`, devices_queued: started.devices_queued, snapshot: started.snapshot });
      },
    );

  collectRoute(
    '/:id/collect',
    'Back up every matching device in the background',
    'Body: empty or {timeout_seconds}. Answers 202 {message, devices_queued, snapshot}; 400 "No devices match the filter"; 409 while collecting.',
    snapshots.collect,
    'devices',
  );
  collectRoute(
    '/:id/recollect-failed',
    'Back up again only the devices that failed; successful results stay',
    'Body: empty or {timeout_seconds}. Answers 202 {message, devices_queued, snapshot}; 400 when no device failed; 409 while collecting.',
    snapshots.recollectFailed,
    'failed devices again',
  );

  app.get(
    '/:id/backups',
    {
      config,
      schema: {
        tags,
        summary: 'Per-device backup entries of the latest collection',
        params: IdParams,
        response: { 200: BackupList, ...plainErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const backups = await snapshots.backups(caller(request).orgId, request.params.id);
      return { backups, total: backups.length };
    },
  );

  app.get(
    '/backups/:config_id/log',
    {
      config,
      schema: {
        tags,
        summary: 'Session transcript of one device backup, every secret masked',
        params: ConfigIdParams,
        response: { 200: BackupLog, ...plainErrors(400, 401, 403, 404) },
      },
    },
    async (request) => ({ log: await snapshots.transcript(caller(request).orgId, request.params.config_id) }),
  );
}

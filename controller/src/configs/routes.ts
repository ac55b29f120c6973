import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { errorResponses } from '../http/schemas';
import { caller } from '../auth/route-guard';
import type { BackupServices } from './area';
import {
  BulkPullBody,
  BulkPullResult,
  ConfigList,
  ConfigListQuery,
  ConfigVersion,
  ConfigVersionWithText,
  DeviceParams,
  DiffQuery,
  NotesBody,
  PullQuery,
  PullResult,
  RevealQuery,
  VersionDiff,
  VersionParams,
} from './schemas';

const tags = ['configs'];
const config = { permission: 'devices.access' } as const;

/** Config backups under /api/config/devices: pull, bulk-pull, versions, notes, diff. */
export async function configRoutes(parent: FastifyInstance, { configs, snapshots }: BackupServices): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  /** A version as shown: masked, or raw for reveal=true (permission checked and audited first). */
  const shownVersion = async (request: FastifyRequest, device_id: string, reveal: boolean | undefined, version: number | null) => {
    const me = caller(request);
    if (reveal !== true) return configs.version(me.orgId, device_id, version);
    return configs.revealed(me, { device_id }, version === null ? 'latest version' : `version ${version}`, () =>
      configs.version(me.orgId, device_id, version, true),
    );
  };

  app.post(
    '/:device_id/pull',
    {
      config,
      schema: {
        tags,
        summary: 'Pull the running config now; each method is stored as its own version (failed ones too)',
        params: DeviceParams,
        querystring: PullQuery,
        response: { 201: PullResult, ...errorResponses(400, 401, 403, 404, 502, 503, 504) },
      },
    },
    async (request, reply) => reply.code(201).send(await configs.pull(caller(request), request.params.device_id, request.query.method ?? 'both')),
  );

  app.post(
    '/bulk-pull',
    {
      config,
      schema: {
        tags,
        summary: 'Pull many devices in the background, as a snapshot',
        body: BulkPullBody,
        response: { 202: BulkPullResult, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request, reply) => reply.code(202).send(await snapshots.bulkPull(caller(request), request.body.device_ids, request.body.method ?? 'both')),
  );

  app.get(
    '/:device_id/configs',
    {
      config,
      schema: {
        tags,
        summary: 'Stored config versions of a device, newest first (no config_text)',
        params: DeviceParams,
        querystring: ConfigListQuery,
        response: { 200: ConfigList, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => configs.list(caller(request).orgId, request.params.device_id, request.query.limit ?? 50, request.query.offset ?? 0),
  );

  app.get(
    '/:device_id/configs/latest',
    {
      config,
      schema: {
        tags,
        summary: "The newest stored version, with config_text (the device's secrets masked unless reveal=true)",
        params: DeviceParams,
        querystring: RevealQuery,
        response: { 200: ConfigVersionWithText, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => shownVersion(request, request.params.device_id, request.query.reveal, null),
  );

  app.get(
    '/:device_id/configs/:version',
    {
      config,
      schema: {
        tags,
        summary: "One stored version, with config_text (the device's secrets masked unless reveal=true)",
        params: VersionParams,
        querystring: RevealQuery,
        response: { 200: ConfigVersionWithText, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => shownVersion(request, request.params.device_id, request.query.reveal, request.params.version),
  );

  app.put(
    '/:device_id/configs/:version/notes',
    {
      config,
      schema: {
        tags,
        summary: 'Set operator notes on a version; notes_by is the caller',
        params: VersionParams,
        body: NotesBody,
        response: { 200: ConfigVersion, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => configs.setNotes(caller(request), request.params.device_id, request.params.version, request.body.notes),
  );

  app.get(
    '/:device_id/diff-versions',
    {
      config,
      schema: {
        tags,
        summary: "Unified diff between two stored versions (the device's secrets masked unless reveal=true)",
        params: DeviceParams,
        querystring: DiffQuery,
        response: { 200: VersionDiff, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { old_version, new_version, reveal = false } = request.query;
      const me = caller(request);
      const { device_id } = request.params;
      if (!reveal) return configs.diff(me.orgId, device_id, old_version, new_version);
      return configs.revealed(me, { device_id }, `diff of versions ${old_version} and ${new_version}`, () =>
        configs.diff(me.orgId, device_id, old_version, new_version, true),
      );
    },
  );
}

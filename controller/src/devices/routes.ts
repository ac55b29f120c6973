import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { appError } from '../errors/app-error';
import { IdParams, errorResponses } from '../http/schemas';
import { caller } from '../auth/route-guard';
import { IMPORT_BODY_LIMIT, LARGE_BODY_BYTES } from '../http/body-limits';
import { admitLargeBody, bodyHeapEstimate } from '../http/large-bodies';
import { checkCsvSize, jsonRows, parseCsv } from './import';
import { BulkBody, Device, DeviceBody, DeviceChanges, DeviceList, DeviceListQuery, ImportQuery, ImportSummary, JsonImportBody } from './schemas';
import { LIST_VERSION } from './store';

const tags = ['devices'];
const config = { permission: 'devices.access' } as const;

const CSV_TYPES = ['text/csv', 'application/csv'];

/**
 * Devices rows of API.md that need no agent. Mounted at /api/devices; other areas add
 * /api/devices/<static> and /api/devices/:id/<sub> routes under the same prefix.
 */
export async function deviceRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { devices } = app.services;

  // Rows and fields are counted on the bytes first; a large file is decoded and parsed under the
  // heap budget (http/large-bodies.ts), like a large JSON body. The route's bodyLimit applies.
  app.addContentTypeParser(CSV_TYPES, { parseAs: 'buffer' }, async (request: FastifyRequest, bytes: Buffer) => {
    const fields = checkCsvSize(bytes);
    if (bytes.length >= LARGE_BODY_BYTES) await admitLargeBody(request, bodyHeapEstimate(bytes.length, fields));
    return bytes.toString('utf8');
  });

  app.get(
    '',
    {
      // The organization's list version comes with the session check: a remembered answer then
      // costs no query of its own.
      config: { ...config, alongSession: LIST_VERSION },
      schema: {
        tags,
        summary: 'List devices (summary form), filtered, sorted and paged',
        querystring: DeviceListQuery,
        response: { 200: DeviceList, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const { limit = 50, offset = 0, sort, order, ...filter } = request.query;
      const body = await devices.listJson(caller(request).orgId, filter, { sort, order }, limit, offset, request.alongSession as number);
      // Already JSON in the DeviceList shape (built by PostgreSQL): bytes are sent as they are.
      return reply.type('application/json; charset=utf-8').send(body as unknown as Static<typeof DeviceList>);
    },
  );

  app.post(
    '',
    {
      config,
      schema: { tags, summary: 'Create a device', body: DeviceBody, response: { 201: Device, ...errorResponses(400, 401, 403, 409) } },
    },
    async (request, reply) => reply.code(201).send(await devices.create(caller(request), request.body)),
  );

  app.post(
    '/import/csv',
    {
      config,
      bodyLimit: IMPORT_BODY_LIMIT,
      preValidation: async (request) => {
        const type = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
        if (!CSV_TYPES.includes(type)) throw appError('UNSUPPORTED_MEDIA_TYPE', 'Send the CSV file with Content-Type: text/csv');
      },
      schema: {
        tags,
        summary:
          'Import devices from CSV (header: name, host, device_type, manufacturer, model, platform, site, description; ' +
          'up to 20 MiB, 50,000 rows and 1,000,000 fields)',
        querystring: ImportQuery,
        consumes: CSV_TYPES,
        body: Type.String(),
        response: { 200: ImportSummary, ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request) => devices.import(caller(request), 'csv', parseCsv(request.body), request.query.profile_id),
  );

  app.post(
    '/import/json',
    {
      config,
      bodyLimit: IMPORT_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Import devices from a JSON array of objects with the CSV column names (up to 20 MiB and 50,000 rows)',
        querystring: ImportQuery,
        body: JsonImportBody,
        response: { 200: ImportSummary, ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request) => devices.import(caller(request), 'json', jsonRows(request.body), request.query.profile_id),
  );

  app.patch(
    '/bulk',
    {
      config,
      schema: {
        tags,
        summary:
          'Set the same fields on many devices (profile_id, site_id, site, device_type, manufacturer, model, platform, description, tags, ' +
          'poll_enabled, poll_interval_minutes)',
        body: BulkBody,
        response: { 200: Type.Object({ updated: Type.Integer() }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => ({ updated: await devices.bulkUpdate(caller(request), request.body.ids, request.body.fields) }),
  );

  app.get(
    '/:id',
    {
      config,
      schema: { tags, summary: 'One device (full form)', params: IdParams, response: { 200: Device, ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => devices.get(caller(request).orgId, request.params.id),
  );

  app.put(
    '/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Change a device: only the fields sent change (source cannot)',
        params: IdParams,
        body: DeviceChanges,
        response: { 200: Device, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => devices.update(caller(request), request.params.id, request.body),
  );

  app.delete(
    '/:id',
    {
      config,
      schema: { tags, summary: 'Delete a device', params: IdParams, response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409) } },
    },
    async (request, reply) => {
      await devices.delete(caller(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  // Forgetting a pinned identity (trust on first use): the next session pins what the device presents.
  const pins = [
    [
      'ssh-host-key',
      'ssh_host_key',
      'Forget the pinned SSH host key (after a device was replaced or re-keyed): the next SSH or NETCONF session pins the key the device offers',
    ],
    [
      'gnmi-certificate',
      'gnmi_certificate',
      "Forget the pinned gNMI TLS certificate (after the device's certificate was replaced): the next gNMI-over-TLS session pins the " +
        'certificate the device presents',
    ],
  ] as const;
  for (const [path, pin, summary] of pins) {
    app.delete(
      `/:id/${path}`,
      {
        config,
        schema: { tags, summary, params: IdParams, response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) } },
      },
      async (request, reply) => {
        await devices.clearPin(caller(request), request.params.id, pin);
        return reply.code(204).send(null);
      },
    );
  }
}

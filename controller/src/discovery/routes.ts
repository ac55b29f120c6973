import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IdParams, errorResponses } from '../http/schemas';
import { caller } from '../auth/route-guard';
import {
  ArpList,
  HistoryQuery,
  InterfaceList,
  MacList,
  NeighborList,
  NeighborQuery,
  PollHistory,
  PollQueued,
  PollStatus,
  RecordQuery,
  VlanList,
} from './schemas';
import type { DiscoveryService } from './service';
import type { RecordKind } from './store';

const tags = ['discovery'];
const config = { permission: 'devices.access' } as const;
const errors = errorResponses(400, 401, 403, 404);

/** GET /api/devices/:id/{interfaces,neighbors,arp-table,mac-table,vlans,status,poll-history}, POST /api/devices/:id/poll. */
export async function discoveryRoutes(parent: FastifyInstance, opts: { discovery: DiscoveryService }): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { discovery } = opts;

  const reads: [string, RecordKind, string, typeof InterfaceList | typeof ArpList | typeof MacList | typeof VlanList, string][] = [
    ['/:id/interfaces', 'interfaces', 'interfaces', InterfaceList, 'Interfaces of the device from its latest polls'],
    ['/:id/arp-table', 'arp', 'arp_table', ArpList, 'ARP table of the device from its latest polls'],
    ['/:id/mac-table', 'mac', 'mac_table', MacList, 'MAC address table of the device from its latest polls'],
    ['/:id/vlans', 'vlans', 'vlans', VlanList, 'VLANs of the device from its latest polls'],
  ];
  for (const [url, kind, key, schema, summary] of reads) {
    app.get(
      url,
      { config, schema: { tags, summary, params: IdParams, querystring: RecordQuery, response: { 200: schema, ...errors } } },
      async (request) => {
        const { limit = 1000, offset = 0 } = request.query;
        const { records, ...rest } = await discovery.records(caller(request).orgId, request.params.id, kind, limit, offset);
        return { ...rest, [key]: records };
      },
    );
  }

  app.get(
    '/:id/neighbors',
    {
      config,
      schema: {
        tags,
        summary: 'CDP and LLDP neighbors of the device from its latest polls',
        params: IdParams,
        querystring: NeighborQuery,
        response: { 200: NeighborList, ...errors },
      },
    },
    async (request) => {
      const { limit = 1000, offset = 0, protocol } = request.query;
      const { records, ...rest } = await discovery.records(caller(request).orgId, request.params.id, 'neighbors', limit, offset, {
        section: protocol,
      });
      return { ...rest, neighbors: records };
    },
  );

  app.get(
    '/:id/status',
    {
      config,
      schema: {
        tags,
        summary: 'Polling settings and the latest poll result of the device',
        params: IdParams,
        response: { 200: PollStatus, ...errors },
      },
    },
    async (request) => discovery.status(caller(request).orgId, request.params.id),
  );

  app.get(
    '/:id/poll-history',
    {
      config,
      schema: {
        tags,
        summary: 'Poll results of the device, newest first',
        params: IdParams,
        querystring: HistoryQuery,
        response: { 200: PollHistory, ...errors },
      },
    },
    async (request) => {
      const { limit = 50, offset = 0 } = request.query;
      return discovery.history(caller(request).orgId, request.params.id, limit, offset);
    },
  );

  app.post(
    '/:id/poll',
    {
      config,
      schema: {
        tags,
        summary: 'Queue a discovery poll of the device now (202 with the poll id)',
        params: IdParams,
        response: { 202: PollQueued, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      const { poll, created } = await discovery.requestPoll(caller(request), request.params.id, 'manual');
      return reply.code(202).send({
        poll_id: poll.id,
        status: poll.status,
        queued: created,
        message: created ? 'Poll queued' : 'A poll of this device is already queued or running',
      });
    },
  );
}

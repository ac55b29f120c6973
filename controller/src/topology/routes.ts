import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Nullable, Uuid, errorResponses } from '../http/schemas';
import { caller } from '../auth/route-guard';

const Node = Type.Object({
  id: Type.String({ description: 'The device id, or external:<name> for a neighbor not in the inventory.' }),
  kind: Type.Union([Type.Literal('device'), Type.Literal('external')]),
  device_id: Nullable(Uuid),
  name: Type.String(),
  host: Nullable(Type.String()),
  device_type: Nullable(Type.String()),
  site_id: Nullable(Uuid),
  platform: Nullable(Type.String({ description: 'As advertised by CDP/LLDP neighbors.' })),
});
const Link = Type.Object({
  source: Type.String(),
  target: Type.String(),
  source_interface: Nullable(Type.String()),
  target_interface: Nullable(Type.String()),
  protocols: Type.Array(Type.Union([Type.Literal('cdp'), Type.Literal('lldp')])),
  confirmed: Type.Boolean({ description: 'Both ends report the link.' }),
});
export const Topology = Type.Object({ site_id: Nullable(Uuid), nodes: Type.Array(Node), links: Type.Array(Link) });
const TopologyQuery = Type.Object({ site_id: Type.Optional(Uuid) });

/** GET /api/topology: nodes and links from the neighbor records. */
export async function topologyRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { topology } = app.services;
  app.get(
    '',
    {
      config: { permission: 'devices.access' },
      schema: {
        tags: ['discovery'],
        summary:
          'Network topology from CDP/LLDP neighbor records: inventory devices and external neighbors as nodes, links between them ' +
          "(optionally one site's devices and their neighbors)",
        querystring: TopologyQuery,
        response: { 200: Topology, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => topology.build(caller(request).orgId, request.query.site_id),
  );
}

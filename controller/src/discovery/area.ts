import type { FastifyInstance } from 'fastify';
import { topologyRoutes } from '../topology/routes';
import { discoveryRoutes } from './routes';

/** Discovery: mounts the device discovery routes under /api/devices and GET /api/topology. */
export async function discoveryArea(app: FastifyInstance): Promise<void> {
  await app.register(discoveryRoutes, { prefix: '/api/devices', discovery: app.services.discovery });
  await app.register(topologyRoutes, { prefix: '/api/topology' });
}

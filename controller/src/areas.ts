import type { FastifyInstance } from 'fastify';
import { adminRoutes } from './admin/routes';
import { agentsRoutes } from './agents/routes';
import { authRoutes } from './auth/routes';
import { configsArea } from './configs/area';
import { consolePlugin } from './console/plugin';
import { deploymentRoutes } from './deployments/routes';
import { deviceRoutes } from './devices/routes';
import { discoveryArea } from './discovery/area';
import { netboxRoutes } from './netbox/routes';
import { profileRoutes } from './profiles/routes';
import { siteRoutes } from './sites/routes';
import { stackRoutes } from './stacks/routes';
import { instanceRoutes } from './instances/routes';
import { liveRoutes } from './live/routes';
import { platformRoutes } from './platforms/routes';
import { taskRoutes } from './tasks/routes';
import { templateRoutes } from './templates/routes';
import { tlsRoutes } from './tls/routes';

/**
 * Every API area, mounted at its prefix. One line per area: add yours here.
 * Areas may also add background work (dispatchers, schedulers) through app hooks.
 */
export async function registerAreas(app: FastifyInstance): Promise<void> {
  await app.register(authRoutes, { prefix: '/api/auth' });
  await app.register(adminRoutes, { prefix: '/api/admin' });
  await app.register(tlsRoutes, { prefix: '/api/tls' });
  await app.register(agentsRoutes, { prefix: '/api' }); // /api/agents, /api/sites/:id/health
  await app.register(profileRoutes, { prefix: '/api/profiles' });
  await app.register(siteRoutes, { prefix: '/api/sites' });
  await app.register(deviceRoutes, { prefix: '/api/devices' });
  await app.register(netboxRoutes, { prefix: '/api/devices' });
  await app.register(configsArea); // /api/config/devices, /api/devices/snapshots, backup routes under /api/devices
  await app.register(platformRoutes, { prefix: '/api/config' });
  await app.register(templateRoutes, { prefix: '/api/config' });
  await app.register(stackRoutes, { prefix: '/api/config' });
  await app.register(deploymentRoutes, { prefix: '/api/config' });
  await app.register(instanceRoutes, { prefix: '/api/config' });
  await app.register(taskRoutes, { prefix: '/api/tasks' });
  await app.register(liveRoutes, { prefix: '/api' }); // GET /api/live (WebSocket)
  await app.register(discoveryArea); // /api/devices/:id/{interfaces,neighbors,…,poll}, /api/topology
  await app.register(consolePlugin); // the operator console at / (controller/console, built to its dist/)
}

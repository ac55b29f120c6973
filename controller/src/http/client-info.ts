import type { FastifyRequest } from 'fastify';
import type { ClientInfo } from '../auth/auth-service';

export function clientInfo(request: FastifyRequest): ClientInfo {
  return { ip: request.ip, userAgent: String(request.headers['user-agent'] ?? '') };
}

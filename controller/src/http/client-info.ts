import type { FastifyRequest } from 'fastify';

/** Who is calling, as sign-in lockout and the audit log record it. */
export interface ClientInfo {
  ip: string;
  userAgent: string;
}

export function clientInfo(request: FastifyRequest): ClientInfo {
  return { ip: request.ip, userAgent: String(request.headers['user-agent'] ?? '') };
}

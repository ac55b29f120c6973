import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';

/** GET /api/tls/ca-certificate: the CA clients trust to reach this service over TLS. */
export async function tlsRoutes(app: FastifyInstance): Promise<void> {
  const { ca } = app.services;
  app.get(
    '/ca-certificate',
    {
      config: { public: true },
      schema: { tags: ['tls'], summary: 'The service CA certificate (PEM)', produces: ['application/x-pem-file'], response: { 200: Type.String() } },
    },
    async (_request, reply) =>
      reply.type('application/x-pem-file').header('content-disposition', 'attachment; filename="switchboard-ca.crt"').send(ca.certPem),
  );
}

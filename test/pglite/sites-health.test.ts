// GET /api/sites/health on PGlite (the embedded database of `npm start`): the same suite as on PostgreSQL.
import './use-pglite';
import '../agents/sites-health.test';

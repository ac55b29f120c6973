// Backup progress events on /api/live on PGlite (the embedded database of `npm start`): the same suite as on PostgreSQL.
import './use-pglite';
import '../live/backup-events.test';

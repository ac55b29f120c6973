// The controller's side of deploy jobs' pre-deployment backups on PGlite (the embedded database of `npm start`): the same suite as on PostgreSQL.
import './use-pglite';
import '../deployments/backup-store.test';

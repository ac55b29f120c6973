// Organization isolation of users, sessions and settings, on PGlite (the embedded database of `npm start`): the same suite as on PostgreSQL.
import './use-pglite';
import '../admin/isolation.test';

// Device list sorting (beyond API.md), on PGlite (the embedded database of `npm start`): the same suite as on PostgreSQL.
import './use-pglite';
import '../inventory/device-sort.test';

// NetBox source CRUD, syncs (their counts of removed and deleted devices) and isolation, on PGlite
// (the embedded database of `npm start`): the same suite as on PostgreSQL.
import './use-pglite';
import '../inventory/netbox.test';

// NetBox source CRUD, syncs (their counts of removed and deleted devices, hosts outside a profile's
// allowed_networks refused) and isolation, on PGlite
// (the embedded database of `npm start`): the same suite as on PostgreSQL.
import './use-pglite';
import '../inventory/netbox.test';

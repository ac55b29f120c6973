// Template CRUD, versions, deletes and isolation, on PGlite (the embedded database of `npm start`): the same suite as on PostgreSQL.
import './use-pglite';
import '../templates/templates.test';

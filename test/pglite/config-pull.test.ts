// Config pulls, stored versions and their transcripts, on PGlite (the embedded database of `npm start`): the same suite as on PostgreSQL.
import './use-pglite';
import '../configs/pull.test';

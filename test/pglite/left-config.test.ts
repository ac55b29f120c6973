// One open deployment per device and rollbacks onto the config a deployment left, on PGlite (the embedded database of `npm start`).
import './use-pglite';
import '../deployments/left-config.test';

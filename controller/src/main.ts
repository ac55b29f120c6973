import { runFromEnvironment } from './server';

/** `npm run controller`: the controller alone (agents connect over NATS). */
await runFromEnvironment('controller listening; API explorer at /api/docs');

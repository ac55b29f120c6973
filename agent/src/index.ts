/**
 * The agent package's one public entry: what a program that embeds an agent needs (the
 * `npm run agent` process, the controller's built-in agent). Nothing outside agent/ imports
 * deeper than this file.
 */
export { AgentConfigError } from './config';
export { DRIVERS, withDrivers, type DriverRegistry } from './drivers';
export { enroll, loadIdentity, saveIdentity, IDENTITY_FILE, type AgentIdentity } from './identity';
export { natsAgentLink, type NatsLinkIdentity, type NatsUserAuth } from './nats-link';
export { AgentRuntime, capabilitiesOf, type RuntimeIdentity, type RuntimeOptions } from './runtime';
export { AGENT_VERSION } from './version';
export { AGENT_THREAD_URL, type AgentThreadData } from './thread/data';

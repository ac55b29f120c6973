/** Discovery on the agent: the `poll` job kind, its parsers and the openconfig mapping. */
export { runPoll } from './poll-job';
export { pollOverCli } from './ssh-poll';
export { pollOverGnmi, interfacesFromOc, lldpFromOc, fdbAndVlansFromOc, GNMI_PATHS } from './gnmi-poll';
export { parseSection } from './parse';
export { discoveryDialect, DISCOVERY_DIALECT_TYPES } from './dialects';
export * from '../../../shared/src/discovery/records';

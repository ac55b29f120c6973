/** SSH CLI device simulator: per-dialect devices, fault modes, fleets. */
export {
  startSshDevice,
  startSshFleet,
  simHostKey,
  normalizeConfig,
  type SshDeviceOptions,
  type SimSshDevice,
  type SshFleetOptions,
  type SimSshFleet,
  type SshAuthMethod,
} from './device';
export { registerSshCommand, type SshFaults, type SimCommandContext, type SimCommandHandler } from './cli';
export { PERSONAS, getPersona, type Persona, type Mode } from './personas';
export { sshTarget } from './target';

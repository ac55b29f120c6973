/**
 * `npm run agent`: one agent process. Enrolls once with SWITCHBOARD_ENROLL_TOKEN (its own key
 * pair; identity kept in SWITCHBOARD_AGENT_STATE_DIR), then takes jobs of its pool over NATS.
 * Restarts reuse the identity. A missing or bad setting stops it with one line naming it.
 * Settings are checked before the drivers load, so a bad one answers at once.
 */
import { join } from 'node:path';
import { AgentConfigError, loadAgentConfig } from './config';
import { loadAgentOpsConfig } from './ops/config';
import { redactUrls } from '../../shared/src/ops/redact';
import { JETSTREAM_REQUIRED, jetStreamMissing } from '../../shared/src/nats/jetstream-check';
import { whileWaiting } from './waiting';

try {
  const config = loadAgentConfig();
  const opsConfig = loadAgentOpsConfig();
  const [
    { default: pino },
    { AGENT_VERSION, AgentRuntime, DRIVERS, capabilitiesOf, enroll, loadIdentity, natsAgentLink },
    { AgentOps },
    { TAKEN_JOBS_FILE, natsSeed, secureStateDir },
    { NatsRenewal },
  ] = await Promise.all([import('pino'), import('./index'), import('./ops'), import('./state-dir'), import('./nats-renewal')]);
  const log = pino({
    level: config.logLevel,
    name: 'agent',
    redact: { paths: ['*.password', '*.enable_password', '*.private_key', '*.token', '*.private_jwk'], censor: '[redacted]' },
  });
  secureStateDir(config.stateDir);
  let identity = loadIdentity(config.stateDir);
  if (identity) {
    log.info({ agent: identity.agent_id, name: identity.name, pool: identity.pool }, 'using the enrolled identity');
  } else {
    identity = await enroll(config, AGENT_VERSION, capabilitiesOf(DRIVERS));
    log.info({ agent: identity.agent_id, name: identity.name, pool: identity.pool }, 'enrolled');
  }
  // NATS operator mode: connect as this agent's own NATS user, with credentials renewed before they expire.
  const renewal = identity.nats.user_jwt ? new NatsRenewal({ identity, stateDir: config.stateDir, log }) : null;
  let link;
  const natsUrl = redactUrls(config.natsUrl);
  const waiting = whileWaiting(10_000, () =>
    log.warn({ nats: natsUrl }, `cannot reach NATS at ${natsUrl} yet; retrying (is nats-server running, with -js?)`),
  );
  try {
    link = await natsAgentLink(config.natsUrl, identity, renewal ? { jwt: renewal.jwt, seed: natsSeed(config.stateDir).seed } : undefined);
  } catch (err) {
    throw new AgentConfigError(
      `NATS_URL: ${jetStreamMissing(err) ? JETSTREAM_REQUIRED(natsUrl) : `cannot use ${natsUrl}: ${(err as Error).message}`}`,
    );
  } finally {
    waiting.stop();
  }
  log.info({ nats: natsUrl }, 'connected to NATS');
  renewal?.start(link);
  void link.connection.closed().then((err) => {
    // Operator mode, closed by NATS rather than by us: its credentials were refused (revoked, or expired unrenewed).
    if (!err || !renewal) return;
    console.error(
      `switchboard-agent: NATS closed the connection (${err.message}); if this agent was revoked, create a new agent and enroll with its token`,
    );
    process.exit(3);
  });
  const ops = new AgentOps({
    config: opsConfig,
    identity,
    version: AGENT_VERSION,
    link,
    drivers: DRIVERS,
    controllerUrl: config.controllerUrl ?? identity.controller_url,
    log,
  });
  const runtime = new AgentRuntime({
    identity,
    link: ops.link,
    drivers: ops.drivers,
    concurrency: config.concurrency,
    connectConcurrency: config.connectConcurrency,
    version: AGENT_VERSION,
    log,
    health: () => ops.connectionReport(),
    observer: ops.metrics,
    takenJobsFile: join(config.stateDir, TAKEN_JOBS_FILE),
    onRevoked: (reason) => {
      console.error(`switchboard-agent: the controller refused this agent (${reason}); create a new agent and enroll with its token`);
      void runtime.stop(0).finally(() => process.exit(3));
    },
  });
  await runtime.start();
  await ops.start(runtime, config.concurrency);
  log.info({ concurrency: config.concurrency, connect_concurrency: config.connectConcurrency, capabilities: runtime.capabilities }, 'agent running');
  ops.stopOnSignals(runtime);
} catch (err) {
  console.error(err instanceof AgentConfigError ? `switchboard-agent: ${err.message}` : err);
  process.exit(1);
}

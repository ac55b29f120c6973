import type { ErrorSpec } from '../spec';

export const agentsErrors = {
  AGENT_NOT_FOUND: { status: 404, message: 'Agent not found', doc: "No live (non-revoked) agent with this id in the caller's organization." },
  AGENT_NAME_TAKEN: {
    status: 409,
    message: 'An agent with this name already exists',
    doc: "Agent names are unique among the organization's live agents; pick another name or revoke the old agent.",
  },
  ENROLLMENT_TOKEN_INVALID: {
    status: 401,
    message: 'Enrollment token is invalid, expired or already used',
    doc:
      'Enrollment tokens are single use and short-lived (setting agents.enrollment_token_minutes). Create a new agent with POST ' +
      '/api/agents for a fresh token.',
  },
  AGENT_PUBLIC_KEY_INVALID: {
    status: 400,
    message: 'public_key is not a usable P-256 public key',
    doc: "Enrollment needs the agent's EC P-256 public key, as a JWK object or an SPKI PEM block.",
  },
  AGENT_NATS_KEY_INVALID: {
    status: 400,
    message: "nats_public_key must be the agent's NATS user public key (U followed by 55 base32 characters)",
    doc: 'A controller running NATS in operator mode signs each agent NATS credentials for its own user nkey; upgrade the agent if it sent none.',
  },
  JOB_KIND_UNKNOWN: {
    status: 400,
    message: 'Unknown job kind',
    doc: 'The job kind is not one the agents run (backup, test_credential, deploy, rollback, poll).',
  },
  JOBS_WAIT_TIMEOUT: {
    status: 504,
    message: 'The jobs did not finish in time',
    doc: 'A request waited for device jobs longer than its limit; the jobs keep running and end by their own deadline.',
  },
} satisfies Record<string, ErrorSpec>;

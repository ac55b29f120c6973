import type { ErrorSpec } from '../spec';

/** Platforms, templates, stacks, deployments, instances, scheduled tasks and the live stream. */
export const deploymentsErrors = {
  PLATFORM_NOT_FOUND: { status: 404, message: 'Platform not found', doc: 'No platform has that id; GET /api/config/platforms lists them.' },
  UNKNOWN_PLATFORM: { status: 400, message: 'Unknown platform', doc: 'A template named a platform that is not in GET /api/config/platforms.' },
  TEMPLATE_FORMAT_MISMATCH: {
    status: 400,
    message: "The config format does not fit the platform's transport",
    doc:
      'NETCONF platforms take xml templates and gNMI platforms json; cli templates fit any platform and are pushed over SSH in the device ' +
      "type's CLI dialect.",
  },
  TEMPLATE_NOT_FOUND: { status: 404, message: 'Template not found', doc: "No template with that id in the caller's organization." },
  TEMPLATE_VERSION_NOT_FOUND: {
    status: 404,
    message: 'Template version not found',
    doc: 'The template has no such version; GET /templates/:id/versions lists them.',
  },
  RENDER_ERROR: {
    status: 400,
    message: 'Render error',
    doc: 'The template does not parse or does not render with the variables given; the message names the line and the cause.',
  },
  REQUIRED_VARIABLE_MISSING: {
    status: 400,
    message: 'A required template variable is missing',
    doc:
      'A template variable marked required (GET /templates/:id lists them) was not given, or was null. Template render, stack render, ' +
      'deployments and instance runs refuse before anything renders or is sent; `missing` names the variables (per service and device for stacks).',
  },
  EMPTY_REPLACE_REFUSED: {
    status: 400,
    message: 'A replace with an empty payload was refused',
    doc:
      'A service with operation replace rendered an empty payload (no leaves, an empty list or object, blank text), which would wipe its ' +
      'target on the device. Fix the variables, or send allow_empty_replace: true to mean it.',
  },
  STACK_NOT_FOUND: { status: 404, message: 'Stack not found', doc: "No stack with that id in the caller's organization." },
  STACK_RESOLUTION_FAILED: {
    status: 400,
    message: 'Stack resolution failed',
    doc:
      "A stack render or deployment could not be prepared: a service's template is missing, a device is unknown (or in another " +
      'organization), variable_values does not fit the stack, or a template did not render.',
  },
  DEPLOYMENT_NOT_FOUND: { status: 404, message: 'Deployment not found', doc: "No deployment with that id in the caller's organization." },
  ROLLBACK_NOT_ALLOWED: {
    status: 400,
    message: 'Rollback is not possible',
    doc: 'Rollback needs a deployment in status completed or failed with at least one pre-deployment device backup.',
  },
  INSTANCE_NOT_FOUND: { status: 404, message: 'Instance not found', doc: "No instance with that id in the caller's organization." },
  TASK_NOT_FOUND: { status: 404, message: 'Scheduled task not found', doc: "No scheduled task with that id in the caller's organization." },
  INVALID_SCHEDULE: {
    status: 400,
    message: 'Invalid cron expression',
    doc: 'The cron expression of a scheduled task does not parse (five fields, or six with seconds).',
  },
  INVALID_TASK_TARGET: {
    status: 400,
    message: 'Invalid scheduled task target',
    doc: 'A deployment task needs an instance of the organization; snapshot and backup tasks need their target (snapshot id, device filter).',
  },
} satisfies Record<string, ErrorSpec>;

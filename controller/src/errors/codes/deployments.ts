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
  SECRET_MASK_NOT_STORED: {
    status: 400,
    message: 'A secret variable holds a mask that is not its stored value',
    doc:
      'Variables whose name says they hold a secret (password, secret, key, community, token, psk …) are shown as <secret:xxxxxxxx> masks ' +
      'in stacks, instances and deployments. A mask sent back where the stored value has that mask keeps the stored value (so a record ' +
      'read, edited and saved keeps its secrets); anywhere else it would store the mask itself: send the value. The message names the variable.',
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
      'target on the device; for NETCONF, what is checked is each element the push replaces: the one target_path selects, and any ' +
      'element carrying nc:operation="replace" in the template. A replace of a list entry (a target_path whose last step has keys, ' +
      'e.g. /interfaces/interface[name=eth0]) that carries nothing but those keys (also when repeated in its config container) counts ' +
      'as empty: it would wipe the whole entry but its key. Fix the variables, or send allow_empty_replace: true to mean it.',
  },
  TARGET_PATH_REQUIRED: {
    status: 400,
    message: 'A replace or delete needs a target_path naming the subtree it changes',
    doc:
      'A json (gNMI) or xml (NETCONF) template with operation replace (the default) or delete and no target_path, or for NETCONF one ' +
      "that does not start with '/'. NETCONF would replace or delete every top-level element the template renders, gNMI has no path. " +
      'Refused when the template is saved and when a stack renders or deploys it. Set target_path, e.g. /interfaces/interface[name=eth0], ' +
      'or use operation merge to add to the config without removing anything. cli templates are not concerned.',
  },
  ROOT_TARGET_REFUSED: {
    status: 400,
    message: 'A replace or delete of the whole configuration was refused',
    doc:
      "A json or xml template with operation replace or delete whose target_path is the root ('/', or an origin with no elements such " +
      "as 'openconfig:/'): it would replace or delete the device's whole configuration (gNMI) or every top-level element it renders " +
      '(NETCONF). Refused when the template is saved and when a stack renders or deploys it; name the subtree in target_path.',
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
  DEVICES_IN_OPEN_DEPLOYMENT: {
    status: 409,
    message: 'Devices are in another open deployment',
    doc:
      'A deployment or rollback would change devices that another deployment of the organization is still changing (pending, ' +
      'in_progress or rolling_back; it may yet restore them). `busy` names them with that deployment; wait for it to end. Dry runs ' +
      'change nothing and are never refused for this.',
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

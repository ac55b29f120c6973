import type { ErrorSpec } from '../spec';

export const configsErrors = {
  CONFIG_DEVICE_NOT_FOUND: { status: 404, message: 'Device not found', doc: "The device does not exist in the caller's organization." },
  CONFIG_DEVICES_NOT_FOUND: {
    status: 404,
    message: 'Some devices were not found',
    doc: "A bulk request named devices that do not exist in the caller's organization; `missing` lists them.",
  },
  CONFIG_VERSION_NOT_FOUND: {
    status: 404,
    message: 'Config version not found',
    doc: 'The device has no stored config version with that number (or none at all, for latest).',
  },
  CONFIG_PULL_FAILED: {
    status: 502,
    message: 'Config pull failed',
    doc: 'Every requested method of a single pull failed; each attempt is stored as a failed version with its error_message.',
  },
  CONFIG_PULL_TIMEOUT: {
    status: 504,
    message: 'Config pull did not finish in time',
    doc: "The pull job is still running; its result is stored as a version when it ends. List the device's configs to see it.",
  },
  JOBS_UNAVAILABLE: {
    status: 503,
    message: 'The job service is not running',
    doc: 'The controller started without its job dispatcher, so no device work can be queued.',
  },
  SNAPSHOT_NOT_FOUND: {
    status: 404,
    message: 'Snapshot not found',
    doc: "The snapshot (or backup) does not exist in the caller's organization. Plain text.",
  },
  SNAPSHOT_NO_DEVICES: {
    status: 400,
    message: 'No devices match the filter',
    doc: "Collect found no device matching the snapshot's device_filter. Plain text.",
  },
  SNAPSHOT_NO_FAILED_DEVICES: {
    status: 400,
    message: 'No failed devices to collect again',
    doc: 'recollect-failed on a snapshot without failed devices. Plain text.',
  },
  SNAPSHOT_BUSY: {
    status: 409,
    message: 'Snapshot is already collecting',
    doc: 'Collect or recollect-failed while a collection of the same snapshot is still running; wait for it to end. Plain text.',
  },
  BACKUP_NOT_FOUND: {
    status: 404,
    message: 'Backup not found',
    doc: "No stored config version with that id in the caller's organization. Plain text on the snapshot log route.",
  },
} satisfies Record<string, ErrorSpec>;

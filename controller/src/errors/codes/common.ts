import type { ErrorSpec } from '../spec';

export const commonErrors = {
  VALIDATION_FAILED: { status: 400, message: 'Invalid request', doc: 'A field is missing, mistyped or out of range; the message names it.' },
  INVALID_JSON: { status: 400, message: 'Request body is not valid JSON', doc: 'The body could not be parsed as JSON.' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: 'Unsupported Content-Type',
    doc: 'The body was sent with a Content-Type this endpoint does not read.',
  },
  BODY_TOO_LARGE: {
    status: 413,
    message: 'Request body is too large',
    doc: 'The body is over the size limit of the endpoint; the message gives the limit (docs/security.md#request-bodies).',
  },
  BODY_TOO_MANY_VALUES: {
    status: 413,
    message: 'Request body holds too many JSON values',
    doc: 'A JSON body holds more than 1,000,000 values (objects, arrays, items); max_values gives the limit. Split the work over several requests.',
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    message: 'Request line and headers are too large',
    doc: "The request line and headers are over the server's limit (16 KiB): a URL that long is not an API call; send large values in a JSON body.",
  },
  MALFORMED_REQUEST: { status: 400, message: 'Malformed HTTP request', doc: 'The request is not valid HTTP/1.1; the connection is closed.' },
  REQUEST_TIMEOUT: { status: 408, message: 'Request timed out', doc: 'The client did not send its whole request in time; the connection is closed.' },
  NOT_FOUND: { status: 404, message: 'Not found', doc: "The resource does not exist in the caller's organization." },
  ROUTE_NOT_FOUND: { status: 404, message: 'Route not found', doc: 'No endpoint answers this method and path.' },
  UNKNOWN_REFERENCE: {
    status: 400,
    message: 'A referenced id does not exist in your organization',
    doc: 'A create or update named an id (template, connection profile, device, site) that is unknown or belongs to another organization; nothing was stored.',
  },
  CONFLICT: { status: 409, message: 'Conflict', doc: 'The change conflicts with the current state.' },
  INTERNAL: { status: 500, message: 'Internal server error', doc: 'A fault on the server; the log has the detail.' },
  SERVICE_UNAVAILABLE: {
    status: 503,
    message: 'Service unavailable',
    doc: "A dependency (database, NATS) is not reachable, or a device text too large to mask within the mask workers' limits (docs/security.md) is not shown.",
  },
} satisfies Record<string, ErrorSpec>;

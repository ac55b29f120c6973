/** Conflict codes that belong to one field of a form. */
const CODE_FIELDS: Record<string, string> = { DEVICE_NAME_TAKEN: 'name', SITE_NAME_TAKEN: 'name', AGENT_NAME_TAKEN: 'name' };

/**
 * The form field an API error is about, so the message shows next to it: the validation wording
 * names it ("body.host must NOT have fewer than 1 characters"), conflicts carry a code. Null: a
 * form-level error.
 */
export function fieldOfError(body: unknown): { field: string | null; message: string } {
  const error = (body ?? {}) as { error?: unknown; code?: unknown };
  const message = typeof error.error === 'string' ? error.error : 'The request failed';
  if (typeof error.code === 'string' && CODE_FIELDS[error.code]) return { field: CODE_FIELDS[error.code], message };
  const match = /^body\.([a-z_]+)\b/.exec(message) ?? /^body must have required property '([a-z_]+)'/.exec(message);
  return { field: match ? match[1] : null, message };
}

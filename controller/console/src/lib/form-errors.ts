import { ApiError } from '../api/client';
import { fieldOfError } from './field-errors';

/**
 * Shows why a form's request failed: next to the field the API's error is about (fieldOfError),
 * or, when it is about none of the form's fields, as the form's own error.
 */
export function showRequestError(
  err: unknown,
  values: object,
  setFieldError: (field: string, message: string) => void,
  setFormError: (message: string) => void,
): void {
  const { field, message } = fieldOfError(err instanceof ApiError ? err.body : null);
  if (field && field in values) setFieldError(field, message);
  else setFormError((err as Error).message);
}

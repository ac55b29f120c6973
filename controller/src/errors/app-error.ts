import { CATALOGUE, type ErrorCode } from './catalogue';

/**
 * The one error type services throw. Routes never build error bodies themselves: the
 * error handler turns an AppError into `{"error": message, "code": code, ...extra}`.
 */
export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** Builds the catalogue's error; `message` replaces the default text when the case needs detail. */
export function appError(code: ErrorCode, message?: string, extra?: Record<string, unknown>): AppError {
  const spec = CATALOGUE[code];
  return new AppError(code, spec.status, message ?? spec.message, extra);
}

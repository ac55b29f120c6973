import pino, { type Logger } from 'pino';

/** Paths pino blanks in every log line: credentials must never reach a log. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  '*.password',
  '*.new_password',
  '*.current_password',
  '*.enable_password',
  '*.private_key',
  '*.token',
  '*.refresh_token',
  '*.access_token',
  '*.secret',
  '*.client_secret',
  '*.bind_password',
  'headers.authorization',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination);
}

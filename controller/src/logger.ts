import type { FastifyBaseLogger } from 'fastify';
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

/**
 * Fastify's per-request logger, made only when something is logged through it at an enabled
 * level. A pino child with the redaction list costs tens of microseconds per request (its
 * bindings are serialized through the redactor), a tenth of a short request's CPU, while at
 * LOG_LEVEL warn most requests log nothing. Lines that are written carry the same bindings
 * (reqId) as an eager child's.
 */
export function lazyRequestLogger(parent: FastifyBaseLogger, bindings: pino.Bindings, options: pino.ChildLoggerOptions): FastifyBaseLogger {
  // A route's own logLevel or serializers: the child must exist to carry them.
  if (Object.keys(options).length > 0) return parent.child(bindings, options);
  // The app's logger is the pino logger of createLogger.
  return new LazyChild(parent as unknown as Logger, bindings) as unknown as FastifyBaseLogger;
}

type LogFn = (...args: unknown[]) => void;

class LazyChild {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly own: pino.Bindings,
  ) {}

  private real(): Logger {
    return (this.made ??= this.parent.child(this.own));
  }

  private write(level: pino.Level, args: unknown[]): void {
    if ((this.made ?? this.parent).isLevelEnabled(level)) (this.real()[level] as LogFn)(...args);
  }

  fatal(...args: unknown[]) {
    this.write('fatal', args);
  }
  error(...args: unknown[]) {
    this.write('error', args);
  }
  warn(...args: unknown[]) {
    this.write('warn', args);
  }
  info(...args: unknown[]) {
    this.write('info', args);
  }
  debug(...args: unknown[]) {
    this.write('debug', args);
  }
  trace(...args: unknown[]) {
    this.write('trace', args);
  }
  silent() {}

  get level(): string {
    return (this.made ?? this.parent).level;
  }

  set level(value: string) {
    this.real().level = value;
  }

  isLevelEnabled(level: string): boolean {
    return (this.made ?? this.parent).isLevelEnabled(level);
  }

  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): Logger {
    return this.real().child(bindings, options);
  }

  bindings(): pino.Bindings {
    return this.real().bindings();
  }

  setBindings(bindings: pino.Bindings): void {
    this.real().setBindings(bindings);
  }

  flush(callback?: (err?: Error) => void): void {
    this.parent.flush(callback);
  }
}

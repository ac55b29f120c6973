import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, appError } from '../errors/app-error';
import { formatBytes } from '../http/body-limits';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Snapshot endpoints answer errors as plain text (API.md). */
    plainTextErrors?: boolean;
  }
}

/** Human wording for one validation failure, e.g. "body.name must be string". */
function describeValidation(error: FastifyError): string {
  const first = error.validation?.[0];
  if (!first) return error.message;
  const where = error.validationContext ?? 'request';
  const path = first.instancePath ? first.instancePath.slice(1).replace(/\//g, '.') : '';
  const subject = path ? `${where}.${path}` : where;
  const params = first.params as Record<string, unknown>;
  if (first.keyword === 'required') return `${subject} must have required property '${String(params.missingProperty)}'`;
  if (first.keyword === 'additionalProperties') {
    return `${subject} has unknown property '${String(params.additionalProperty)}'`;
  }
  if (first.keyword === 'format' && params.format === 'uuid') return `${subject} must be a UUID`;
  if (first.keyword === 'enum') return `${subject} must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
  return `${subject} ${first.message ?? 'is invalid'}`;
}

/**
 * PostgreSQL refused a value (class 22: out of range, bad encoding, bad format; class 54: too
 * long for an index, too complex). Requests are checked before they reach the database, so this
 * is the net under a field whose schema was too loose: the value was the problem, not the server.
 */
function isRefusedValue(err: { code?: unknown; severity?: unknown }): boolean {
  return typeof err.code === 'string' && typeof err.severity === 'string' && /^(22|54)[0-9A-Z]{3}$/.test(err.code);
}

/** Maps anything thrown in a route to the catalogue's status, message and code. */
export function toAppError(error: FastifyError | AppError | Error, request?: FastifyRequest): AppError {
  if (error instanceof AppError) return error;
  const err = error as FastifyError;
  if (err.validation) return appError('VALIDATION_FAILED', describeValidation(err));
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return appError('INVALID_JSON', `Request body is not valid JSON: ${err.message}`);
    case 'FST_ERR_CTP_BODY_TOO_LARGE': {
      const limit = request?.routeOptions.bodyLimit;
      if (!limit) return appError('BODY_TOO_LARGE');
      return appError('BODY_TOO_LARGE', `Request body is over the ${formatBytes(limit)} limit of this endpoint`, { max_bytes: limit });
    }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return appError('UNSUPPORTED_MEDIA_TYPE', err.message);
  }
  if (isRefusedValue(err as { code?: unknown; severity?: unknown })) {
    return appError('VALIDATION_FAILED', 'A value in the request is out of range, too long or not valid for its field');
  }
  if (err instanceof SyntaxError && (err as { statusCode?: number }).statusCode === 400) {
    return appError('INVALID_JSON', `Request body is not valid JSON: ${err.message}`);
  }
  const status = err.statusCode ?? 500;
  if (status >= 400 && status < 500) return new AppError('VALIDATION_FAILED', status, err.message);
  return appError('INTERNAL');
}

function send(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  reply.code(error.status);
  // Rate limit and lockout answers say when to come back, wherever they were decided.
  if (typeof error.extra.retry_after_secs === 'number') reply.header('Retry-After', String(error.extra.retry_after_secs));
  if (request.routeOptions.config?.plainTextErrors) {
    return reply.type('text/plain; charset=utf-8').send(error.message);
  }
  return reply.type('application/json; charset=utf-8').send({ error: error.message, code: error.code, ...error.extra });
}

/**
 * The router refuses some URLs before any route, hook or error handler runs: a percent-encoding
 * that does not decode (FST_ERR_BAD_URL) or a path parameter over the router's length limit.
 * Fastify's own answer is {"error":"Bad Request"} with its own code; this answers like every
 * other refusal, with a message that says what is wrong with the path.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const path = request.url.split('?')[0];
  const shown = path.length > 120 ? `${path.slice(0, 120)}…` : path;
  const messages: Record<string, string> = {
    FST_ERR_BAD_URL: `The path ${shown} has a percent-encoding (%XX) that is not valid UTF-8`,
    FST_ERR_MAX_PARAM_LENGTH: `A path parameter of ${shown} is too long to be an id`,
  };
  const message = messages[error.code] ?? `The path ${shown} cannot be routed: ${error.message}`;
  void send(request, reply, appError('VALIDATION_FAILED', message));
}

/** What Node's HTTP parser refused, by its error code (anything else it refuses is not HTTP). */
const CLIENT_ERRORS: Record<string, AppError> = {
  HPE_HEADER_OVERFLOW: appError('HEADERS_TOO_LARGE'),
  ERR_HTTP_REQUEST_TIMEOUT: appError('REQUEST_TIMEOUT'),
};

/** Responses not finished yet, by connection (trackOpenResponses). */
const openResponses = new WeakMap<object, number>();
/** Connections whose parser refused what came after requests still being answered: closed once those are answered. */
const closeWhenAnswered = new WeakSet<Duplex>();

/** Ends a connection once what was written to it has gone out. */
function closeSoon(socket: Duplex): void {
  if (socket.destroyed) return;
  if (!socket.writable) socket.destroy();
  else socket.end(() => socket.destroy());
}

/**
 * Counts each connection's responses from their request until they close (finished, or the
 * connection gone), for clientErrorHandler: a refusal written while one is open would be read as
 * that response, or land inside it.
 */
export function trackOpenResponses(server: Server): void {
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    openResponses.set(socket, (openResponses.get(socket) ?? 0) + 1);
    response.once('close', () => {
      const left = (openResponses.get(socket) ?? 1) - 1;
      if (left > 0) return void openResponses.set(socket, left);
      openResponses.delete(socket);
      if (closeWhenAnswered.has(socket)) closeSoon(socket);
    });
  });
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (headers over the limit, a request
 * that is not HTTP, one that came too slowly): answered like every error, `{error, code}`, on the
 * socket itself, which then closes. A connection the client reset needs nothing.
 *
 * Only when no response of the connection is open, though. Bytes refused behind a request still
 * being answered (HTTP pipelining: a valid request, then garbage, in one packet) would otherwise
 * get the refusal written before that request's answer, which the client reads as the answer, or
 * into the middle of an answer already being sent. Those answers are let finish and the connection
 * is then closed, with nothing written for the refused bytes. Once every response is finished (a
 * kept-alive connection between requests) the refusal is written as usual: it is the next answer.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (openResponses.has(socket)) {
    closeWhenAnswered.add(socket);
    return;
  }
  const refusal = CLIENT_ERRORS[err.code ?? ''] ?? appError('MALFORMED_REQUEST');
  const body = JSON.stringify({ error: refusal.message, code: refusal.code });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

export async function errorHandlerPlugin(app: FastifyInstance): Promise<void> {
  trackOpenResponses(app.server);
  app.setErrorHandler((error, request, reply) => {
    const appErr = toAppError(error as FastifyError, request);
    if (appErr.status >= 500) request.log.error({ err: error }, 'request failed');
    else if (isRefusedValue(error as { code?: unknown; severity?: unknown }))
      request.log.warn({ pg_code: (error as { code?: string }).code }, 'the database refused a request value its schema let through');
    return send(request, reply, appErr);
  });
  app.setNotFoundHandler((request, reply) =>
    send(request, reply, appError('ROUTE_NOT_FOUND', `Route not found: ${request.method} ${request.url.split('?')[0]}`)),
  );
}

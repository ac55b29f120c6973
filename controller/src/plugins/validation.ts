import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { appError } from '../errors/app-error';

/**
 * Bodies are validated strictly (a string is not a number, unknown fields of closed schemas
 * are refused); query strings and path params are coerced, because they arrive as text.
 */
export async function validationPlugin(app: FastifyInstance): Promise<void> {
  const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
  const strict = addFormats(new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: false, strict: false }));
  const coercing = addFormats(new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: false, allErrors: false, strict: false }));
  for (const ajv of [strict, coercing]) ajv.addKeyword({ keyword: 'x-example' });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema));

  // Fastify's JSON parser (with its prototype-poisoning guard), except that an empty body is
  // no body: `curl -X POST -H 'Content-Type: application/json' .../logout` is a fair request.
  // Routes that need a body still refuse it through their schema ("body must be object").
  const parseJson = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    parseJson(request, text, (err, value) => {
      if (!err) return done(null, value);
      let detail = 'a __proto__ key is not allowed';
      try {
        JSON.parse(text);
      } catch (syntax) {
        detail = (syntax as Error).message;
      }
      done(appError('INVALID_JSON', `Request body is not valid JSON: ${detail}`), undefined);
    });
  });
}

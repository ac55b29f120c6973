import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

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
}

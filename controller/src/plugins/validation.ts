import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifyRequest, FastifySchemaValidationError } from 'fastify';
import { appError } from '../errors/app-error';
import { LARGE_BODY_BYTES, MAX_BODY_VALUES } from '../http/body-limits';
import { boundIntegers, inputProblem } from '../http/input-limits';
import { admitLargeBody, bodyHeapEstimate, countJsonValues, largeBodyHooks } from '../http/large-bodies';

type Validate = ((data: unknown) => boolean) & { errors?: FastifySchemaValidationError[] | null };

/**
 * Every validated part (body, query string, params, headers) is checked for NUL characters and
 * over-deep nesting first, whichever content-type parser produced it: a failure is the same 400
 * as a schema failure, naming the field.
 */
function withInputLimits(validate: Validate): Validate {
  const checked: Validate = (data) => {
    const problem = inputProblem(data);
    if (problem) {
      checked.errors = [{ keyword: 'input', instancePath: problem.instancePath, schemaPath: '#', params: {}, message: problem.message }];
      return false;
    }
    const ok = validate(data);
    checked.errors = validate.errors as FastifySchemaValidationError[] | null | undefined;
    return ok;
  };
  return checked;
}

/**
 * Bodies are validated strictly (a string is not a number, unknown fields of closed schemas
 * are refused); query strings and path params are coerced, because they arrive as text.
 */
export async function validationPlugin(app: FastifyInstance): Promise<void> {
  const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
  const strict = addFormats(new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: false, strict: false }));
  const coercing = addFormats(new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: false, allErrors: false, strict: false }));
  for (const ajv of [strict, coercing]) ajv.addKeyword({ keyword: 'x-example' });
  app.setValidatorCompiler(({ schema, httpPart }) => {
    boundIntegers(schema);
    return withInputLimits((httpPart === 'body' ? strict : coercing).compile(schema));
  });

  // Fastify's JSON parser (with its prototype-poisoning guard), except that an empty body is
  // no body: `curl -X POST -H 'Content-Type: application/json' .../logout` is a fair request.
  // Routes that need a body still refuse it through their schema ("body must be object").
  // A large body is counted and admitted to the heap budget first (http/large-bodies.ts).
  const parseJson = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  largeBodyHooks(app);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, async (request: FastifyRequest, bytes: Buffer) => {
    if (bytes.length >= LARGE_BODY_BYTES) {
      const values = countJsonValues(bytes, MAX_BODY_VALUES);
      if (values > MAX_BODY_VALUES) {
        throw appError(
          'BODY_TOO_MANY_VALUES',
          `Request body holds more than ${MAX_BODY_VALUES.toLocaleString('en-US')} JSON values (objects, arrays and items of ` +
            'lists or objects); send the work in several smaller requests',
          { max_values: MAX_BODY_VALUES },
        );
      }
      await admitLargeBody(request, bodyHeapEstimate(bytes.length, values));
    }
    const text = bytes.toString('utf8');
    if (text.trim() === '') return undefined;
    // The default parser answers through the callback; its type also allows a promise form it never returns.
    return new Promise<unknown>((resolve, reject) => {
      void parseJson(request, text, (err, value) => {
        if (!err) return resolve(value);
        let detail = 'a __proto__ key is not allowed';
        try {
          JSON.parse(text);
        } catch (syntax) {
          detail = (syntax as Error).message;
        }
        reject(appError('INVALID_JSON', `Request body is not valid JSON: ${detail}`));
      });
    });
  });
}

import { Type, type TSchema } from '@sinclair/typebox';

/** Building blocks every area's route schemas share. */
export const Uuid = Type.String({ format: 'uuid' });
// Rows carry Date objects; the serializer writes them as ISO 8601 UTC strings.
export const Timestamp = Type.Unsafe<Date | string>({ type: 'string', format: 'date-time' });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/**
 * One of a closed list of strings, as a JSON Schema `enum` (not anyOf of constants): the OpenAPI
 * document shows the list and a refusal names the allowed values.
 */
export const StringEnum = <T extends string>(values: readonly T[], options: { description?: string } = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });

export const ErrorBody = Type.Object(
  { error: Type.String(), code: Type.String() },
  { additionalProperties: true, description: 'Every JSON error: a message a person can act on, and a stable code.' },
);

export const IdParams = Type.Object({ id: Uuid });

/** Standard error responses, merged into each route's `response` map for the OpenAPI document. */
export const errorResponses = (...statuses: number[]) => Object.fromEntries(statuses.map((status) => [status, ErrorBody]));

export const Paging = (defaultLimit: number, maximum: number) => ({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum, default: defaultLimit })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
});

export const Message = Type.Object({ message: Type.String() });

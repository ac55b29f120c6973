/** variable_values (API.md): per service position, the devices it runs on and their values. */
export type VariableValues = Record<
  string,
  { devices: string[]; shared_vars: Record<string, unknown>; device_vars: Record<string, Record<string, unknown>> }
>;

/** Every service of the stack runs on all the given devices, with the stack's default variables. */
export function allServicesOn(stack: { services: unknown[] }, deviceIds: string[]): VariableValues {
  return Object.fromEntries(stack.services.map((_, i) => [String(i), { devices: deviceIds, shared_vars: {}, device_vars: {} }]));
}

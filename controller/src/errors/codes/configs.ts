import type { ErrorSpec } from '../spec';

export const configsErrors = {} satisfies Record<string, ErrorSpec>;

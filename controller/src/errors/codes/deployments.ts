import type { ErrorSpec } from '../spec';

export const deploymentsErrors = {} satisfies Record<string, ErrorSpec>;

import type { ErrorSpec } from '../spec';

export const agentsErrors = {} satisfies Record<string, ErrorSpec>;

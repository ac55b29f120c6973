import type { ErrorSpec } from '../spec';

export const discoveryErrors = {} satisfies Record<string, ErrorSpec>;

import type { ErrorSpec } from '../spec';

export const inventoryErrors = {} satisfies Record<string, ErrorSpec>;

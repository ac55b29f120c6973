import { adminErrors } from './codes/admin';
import { agentsErrors } from './codes/agents';
import { authErrors } from './codes/auth';
import { commonErrors } from './codes/common';
import { configsErrors } from './codes/configs';
import { deploymentsErrors } from './codes/deployments';
import { discoveryErrors } from './codes/discovery';
import { enterpriseAuthErrors } from './codes/enterprise-auth';
import { inventoryErrors } from './codes/inventory';
import { opsErrors } from './codes/ops';

/**
 * Every machine-readable error code the API can answer with, in one place. Each area keeps
 * its entries in codes/<area>.ts; docs/errors.md is generated from this object by
 * `npx tsx controller/src/errors/print-catalogue.ts`.
 */
export const CATALOGUE = {
  ...commonErrors,
  ...authErrors,
  ...enterpriseAuthErrors,
  ...adminErrors,
  ...inventoryErrors,
  ...agentsErrors,
  ...configsErrors,
  ...deploymentsErrors,
  ...discoveryErrors,
  ...opsErrors,
};

export type ErrorCode = keyof typeof CATALOGUE;

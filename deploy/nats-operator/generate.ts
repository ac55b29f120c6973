/**
 * `npm run nats:operator -- DIR [RESOLVER_DIR]`: creates the NATS operator, system account and
 * Switchboard application account (JWTs and seeds) in DIR, and DIR/nats-operator.conf for the
 * server to include (see docs/agent-plane.md). nsc does the same, but Debian does not ship it.
 */
import { join, resolve } from 'node:path';
import { generateOperator, OPERATOR_FILES } from '../../shared/src/nats/operator';

const [dirArg, resolverArg] = process.argv.slice(2);
if (!dirArg) {
  console.error('usage: npm run nats:operator -- DIR [RESOLVER_DIR]   (RESOLVER_DIR: where nats-server keeps account JWTs; default DIR/resolver)');
  process.exit(2);
}
const dir = resolve(dirArg);
try {
  const ids = await generateOperator(dir, { resolverDir: resolve(resolverArg ?? join(dir, 'resolver')) });
  console.log(`created in ${dir}:
  ${OPERATOR_FILES.serverConfig}  include it from nats-server.conf (operator, system account, resolver)
  ${OPERATOR_FILES.accountSeed}, ${OPERATOR_FILES.operatorSigningSeed}, ${OPERATOR_FILES.systemUserCreds}
    the controller's keys: SWITCHBOARD_NATS_OPERATOR_DIR=${dir}
  ${OPERATOR_FILES.operatorSeed}  the operator's own seed: keep it offline, nothing at run time needs it
application account ${ids.account}, system account ${ids.systemAccount}`);
} catch (err) {
  console.error(`nats:operator: ${(err as Error).message}`);
  process.exit(1);
}

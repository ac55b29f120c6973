import { readFileSync } from 'node:fs';

/** The agent's version: the package version. */
export const AGENT_VERSION: string = (() => {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
})();

// A worker thread's first module. Workers do not inherit the TypeScript loader in every host
// (vitest, a plain `node` parent), so the thread registers tsx itself, then runs main.ts.
// Registering it again where the parent already has it (`tsx`, `node --import tsx`) is harmless.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');

/** SSH CLI transport: the driver, its dialect table and the text helpers it is built from. */
export {
  sshCliDriver,
  createSshCliDriver,
  DEFAULT_MAX_OUTPUT_BYTES,
  type SshCliDriverOptions,
  type SshCliDriver,
  type SshCliSessionApi,
} from './session';
export { getDialect, registerDialect, DIALECT_TYPES, type SshDialect, type PromptPatterns } from './dialects';
export { renderLine, renderLines, stripAnsi } from './text';

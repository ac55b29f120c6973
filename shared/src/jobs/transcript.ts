/**
 * A backup result carries its config once. The device's answer to the config command would be
 * in the session transcript too (the same tens of KB a second time, signed, sent and parsed
 * twice), so the agent leaves it out and writes a placeholder in its place; the controller puts
 * the fetched config back before storing the transcript. What the transcript adds beyond the
 * config stays: the login, the commands sent, the driver's notes and every error.
 *
 * The placeholder is one line between two U+E000 (a private-use character; the agent replaces any
 * a device sends with U+FFFD), so device output can never be taken for one.
 */
export const PLACEHOLDER_MARK = '\uE000';
const PLACEHOLDER = /\uE000config:(cli|structured)\uE000\n?/g;

export function configPlaceholder(method: 'cli' | 'structured'): string {
  return `${PLACEHOLDER_MARK}config:${method}${PLACEHOLDER_MARK}\n`;
}

/** The transcript with each placeholder replaced by the config its method fetched. */
export function expandTranscript(transcript: string, configOf: (method: 'cli' | 'structured') => string | undefined): string {
  if (!transcript.includes(PLACEHOLDER_MARK)) return transcript; // nothing fetched
  return transcript.replace(PLACEHOLDER, (_, method: 'cli' | 'structured') => {
    const text = configOf(method);
    if (text === undefined) return `# (the ${method} configuration was not returned)\n`;
    return text.endsWith('\n') ? text : `${text}\n`;
  });
}

/**
 * A backup result carries its config once. The device's answer to the config command would be
 * in the session transcript too (the same tens of KB a second time, signed, sent and parsed
 * twice), so the agent leaves it out and writes a placeholder in its place. The controller stores
 * the transcript that way too, the config being stored once, in its version, and puts the config
 * back when the transcript is read. What the transcript adds beyond the config stays: the login,
 * the commands sent, the driver's notes and every error.
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

/**
 * `fn` applied to the text between the placeholders, which stay as they are: a transcript is
 * masked with its placeholders in place, and a secret as short as "cli" must not break one.
 */
export function mapAroundPlaceholders(transcript: string, fn: (text: string) => string): string {
  let out = '';
  let at = 0;
  for (const match of transcript.matchAll(PLACEHOLDER)) {
    out += fn(transcript.slice(at, match.index)) + match[0];
    at = match.index + match[0].length;
  }
  return out + fn(transcript.slice(at));
}

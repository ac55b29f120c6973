/**
 * One pattern that finds secret values in text (a device's credentials, a deployment's secret
 * variables), for the agent, which masks them in what it reports, and the controller, which
 * masks them in what it shows: both find the same values the same way.
 *
 * `anywhere`: found wherever they occur (credentials, long values). `words`: found only as a whole
 * word, not inside a longer one (a short variable value: a secret `md5` leaves `hmac-md5-96` alone).
 * Values under three characters are never looked for: `on` or `1` would mask half a config.
 */
export function secretValuePattern(anywhere: readonly string[], words: readonly string[] = []): RegExp | undefined {
  const wanted = [
    ...anywhere.filter((v) => v.length >= MIN_SECRET).map((value) => ({ value, word: false })),
    ...words.filter((v) => v.length >= MIN_SECRET).map((value) => ({ value, word: true })),
  ];
  if (wanted.length === 0) return undefined;
  // Longest first, so that a value holding another is found whole.
  wanted.sort((a, b) => b.value.length - a.value.length);
  const alternatives = wanted.map(({ value, word }) => (word ? String.raw`(?<!${WORD})${escapeRegExp(value)}(?!${WORD})` : escapeRegExp(value)));
  return new RegExp(alternatives.join('|'), 'g');
}

/** What continues a word: a short value inside `hmac-md5-96`, `10.0.100.1` or `ge-0/0/100` is not the value. */
const WORD = String.raw`[\w.:/-]`;

/** Variable values from this length are found anywhere; shorter ones only as whole words. */
export const ANYWHERE_FROM = 8;
const MIN_SECRET = 3;

/** Splits values into those found anywhere and those found as whole words (ANYWHERE_FROM). */
export function byLength(values: readonly string[]): [anywhere: string[], words: string[]] {
  return [values.filter((v) => v.length >= ANYWHERE_FROM), values.filter((v) => v.length < ANYWHERE_FROM)];
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

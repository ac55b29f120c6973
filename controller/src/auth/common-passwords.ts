import { dictionary } from '@zxcvbn-ts/language-common';

/** The zxcvbn-ts list of the ~50,000 most common passwords, lower-cased. */
export const COMMON_PASSWORDS: ReadonlySet<string> = new Set((dictionary['passwords-common'] as string[]).map((word) => word.toLowerCase()));

/**
 * True when the password is a common one, or a common one padded with digits and symbols
 * ("password1234!"), which is how people stretch a short favourite to the length rule.
 */
export function isCommonPassword(password: string): boolean {
  const lowered = password.toLowerCase();
  if (COMMON_PASSWORDS.has(lowered)) return true;
  const base = lowered.replace(/[\d\W_]+$/, '');
  return base.length >= 4 && base !== lowered && COMMON_PASSWORDS.has(base);
}

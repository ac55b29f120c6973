import { hash, verify } from '@node-rs/argon2';
import { isCommonPassword } from './common-passwords';

// A real hash of a random string: verifying against it keeps unknown-user logins as slow as
// wrong-password logins, so response time does not reveal which usernames exist.
let dummyHash: Promise<string> | null = null;

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export async function verifyPassword(storedHash: string | null, password: string): Promise<boolean> {
  if (!storedHash) {
    dummyHash ??= hash('switchboard-timing-equalizer');
    await verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return verify(storedHash, password).catch(() => false);
}

/** Returns the reason a new password is refused, or null when it is acceptable. */
export function passwordProblem(password: string, username?: string): string | null {
  if (password.length < 12) return 'New password must be at least 12 characters long';
  const lowered = password.toLowerCase();
  if (isCommonPassword(password)) return 'New password is too common; choose one that is not on a list of common passwords';
  if (username && lowered === username.toLowerCase()) return 'New password must not be the username';
  return null;
}

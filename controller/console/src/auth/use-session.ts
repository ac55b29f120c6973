import { useEffect, useState } from 'react';
import { currentToken, hasRefreshToken, onSessionChange, refresh, takeFragmentTokens } from './session';

export type SessionState = 'checking' | 'signed-in' | 'signed-out';

/** Signed in, signed out, or still trading a stored refresh token (after a reload). */
export function useSession(): SessionState {
  const [state, setState] = useState<SessionState>(() => {
    if (currentToken() || takeFragmentTokens(window.location, window.history)) return 'signed-in';
    return hasRefreshToken() ? 'checking' : 'signed-out';
  });
  useEffect(() => {
    const off = onSessionChange((signedIn) => setState(signedIn ? 'signed-in' : 'signed-out'));
    if (state === 'checking') void refresh().then((ok) => setState(ok ? 'signed-in' : 'signed-out'));
    return () => {
      off();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return state;
}

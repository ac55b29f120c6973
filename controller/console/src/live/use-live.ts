import { useEffect, useRef } from 'react';
import { subscribeLive, type LiveMessage } from './socket';

/** Runs handler for each live message of the given types while the component is mounted. */
export function useLive(types: string[], handler: (message: LiveMessage) => void): void {
  const ref = useRef(handler);
  ref.current = handler;
  const key = types.join(',');
  useEffect(() => {
    const wanted = new Set(key.split(','));
    return subscribeLive((message) => {
      if (wanted.has(message.type)) ref.current(message);
    });
  }, [key]);
}

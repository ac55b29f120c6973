import { Alert } from '@mantine/core';
import { useCallback, useState } from 'react';

/**
 * What an action (a button's request) failed with, kept for showing where the action is. `run`
 * clears the last failure, runs the action and keeps its message when it throws (answering
 * whether it succeeded); `fail` sets a message of the page's own (input it checks before sending).
 */
export function useActionError() {
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (action: () => Promise<unknown>): Promise<boolean> => {
    setError(null);
    try {
      await action();
      return true;
    } catch (err) {
      setError((err as Error).message);
      return false;
    }
  }, []);
  return { error, run, fail: setError };
}

/** An action's failure, in the API's own words, under a title saying what was not done. */
export function ActionError({ error, title }: { error: string | null; title?: string }) {
  if (!error) return null;
  return (
    <Alert color="red" role="alert" title={title}>
      {error}
    </Alert>
  );
}

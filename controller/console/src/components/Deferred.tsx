import { Center, Loader } from '@mantine/core';
import { Suspense, type ReactNode } from 'react';

/** Content whose code loads when it is first shown (a dialog's form), with a loader meanwhile. */
export function Deferred({ children }: { children: ReactNode }) {
  return (
    <Suspense
      fallback={
        <Center h={120}>
          <Loader aria-label="Loading" />
        </Center>
      }
    >
      {children}
    </Suspense>
  );
}

import { notificationsStore } from '@mantine/notifications';
import { useSyncExternalStore } from 'react';

type LateParts = typeof import('../components/late-parts');

/**
 * The shell's parts that the first paint does not need: the notification and dialog layers and the
 * account menu, with their Mantine components, floating-ui, transitions and scroll lock (about a
 * quarter of the main bundle). They load when first needed: a confirmation, a notification, pointing
 * at the account button. (Fetched with App's idle prefetch, they would compete with the page opened next.)
 */
let loaded: LateParts | undefined;
let loading: Promise<LateParts> | undefined;
const listeners = new Set<() => void>();

export function loadLateParts(): Promise<LateParts> {
  return (loading ??= import('../components/late-parts').then(
    (m) => {
      loaded = m;
      for (const listener of listeners) listener();
      return m;
    },
    (err: unknown) => {
      // A failed download may be tried again by the next caller.
      loading = undefined;
      throw err;
    },
  ));
}

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => void listeners.delete(listener);
};

/** The late parts once loaded (the component re-renders then), undefined before. */
export function useLateParts(): LateParts | undefined {
  return useSyncExternalStore(subscribe, () => loaded);
}

// A notification shown before the layers are there waits in its store, which brings them at once.
notificationsStore.subscribe(() => void loadLateParts());

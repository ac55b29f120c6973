import { createElement, lazy, useState, type ComponentType } from 'react';

/** A page's module: its component is the default export. */
type PageModule<P> = { default: ComponentType<P> };

/** A page component that loads its code on first render or when asked ahead (preload). */
export type LazyPage<P> = ComponentType<P> & { preload: () => Promise<PageModule<P>> };

/**
 * Like React.lazy, with preload(): once the code has arrived (a hovered link, the first load, idle
 * prefetch) the page renders at once instead of suspending. A suspended route change shows the
 * Suspense fallback, and React then holds the page back for its fallback throttle (300 ms) even
 * when code and data are already there.
 */
export function lazyPage<P extends object>(load: () => Promise<PageModule<P>>): LazyPage<P> {
  let loaded: ComponentType<P> | undefined;
  let loading: Promise<PageModule<P>> | undefined;
  const preload = () =>
    (loading ??= load().then(
      (m) => {
        loaded = m.default;
        return m;
      },
      (err: unknown) => {
        // A failed download (network) may be tried again by the next render or hover.
        loading = undefined;
        throw err;
      },
    ));
  const Suspending = lazy(preload);
  function Page(props: P) {
    // Chosen once per mount: switching from the lazy wrapper to the component later would remount the page.
    const [type] = useState<ComponentType<P>>(() => loaded ?? Suspending);
    return createElement(type, props);
  }
  return Object.assign(Page, { preload });
}

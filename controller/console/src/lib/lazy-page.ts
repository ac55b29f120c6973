import { createElement, useEffect, useState, type ComponentType, type ReactNode } from 'react';

/** A page's module: its component is the default export. */
type PageModule<P> = { default: ComponentType<P> };

/** A page component that loads its code on first render or when asked ahead (preload). */
export type LazyPage<P> = ComponentType<P> & { preload: () => Promise<PageModule<P>> };

/**
 * Like React.lazy, without Suspense, and with preload(): a page whose code has arrived (a hovered
 * link, the first load, idle prefetch) renders at once; one whose code is still on its way shows
 * `fallback` until it arrives and then renders in the next frame. React.lazy would suspend, and
 * React holds content back for 300 ms after a committed Suspense fallback (its fallback throttle),
 * even when code and data are already there.
 */
export function lazyPage<P extends object>(load: () => Promise<PageModule<P>>, fallback: ReactNode = null): LazyPage<P> {
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
  function Page(props: P) {
    const [state, setState] = useState<{ type?: ComponentType<P>; error?: Error }>(() => ({ type: loaded }));
    useEffect(() => {
      if (state.type) return;
      let live = true;
      preload().then(
        (m) => live && setState({ type: m.default }),
        (error: unknown) => live && setState({ error: error instanceof Error ? error : new Error(String(error)) }),
      );
      return () => {
        live = false;
      };
    }, [state.type]);
    // The nearest error boundary shows a failed download, as with React.lazy.
    if (state.error) throw state.error;
    return state.type ? createElement(state.type, props) : fallback;
  }
  return Object.assign(Page, { preload });
}

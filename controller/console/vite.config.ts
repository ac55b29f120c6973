import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig, type HtmlTagDescriptor, type Plugin } from 'vite';

/**
 * Puts src/boot.ts, built as its own small entry, first in index.html (async, so it runs as soon as
 * it arrives, not after the main bundle): it asks for the first page's data while the main bundle
 * downloads. The main bundle does the same when it runs, so the dev server needs none of this.
 */
function bootFirst(): Plugin {
  return {
    name: 'switchboard-boot-first',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(html, ctx) {
        const boot = Object.values(ctx.bundle ?? {}).find((c) => c.type === 'chunk' && c.isEntry && c.name === 'boot');
        if (!boot || boot.type !== 'chunk') throw new Error('the boot entry is missing from the bundle');
        const preload = (file: string): HtmlTagDescriptor => ({
          tag: 'link',
          attrs: { rel: 'modulepreload', crossorigin: true, href: `/${file}` },
          injectTo: 'head',
        });
        return [
          { tag: 'script', attrs: { type: 'module', async: true, crossorigin: true, src: `/${boot.fileName}` }, injectTo: 'head' },
          // Its imports the main entry shares are preloaded already.
          ...boot.imports.filter((file) => !html.includes(file)).map(preload),
        ];
      },
    },
  };
}

/** The operator console: built to controller/console/dist (gitignored), served at / by the controller. */
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react(), bootFirst()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // One core of a 2-core machine is enough; no source maps keeps `npm ci` quick.
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1200,
    rollupOptions: { input: { index: resolve(import.meta.dirname, 'index.html'), boot: resolve(import.meta.dirname, 'src/boot.ts') } },
  },
  server: { proxy: { '/api': { target: 'http://127.0.0.1:8080', ws: true } } },
});

import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/** The operator console: built to controller/console/dist (gitignored), served at / by the controller. */
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // One core of a 2-core machine is enough; no source maps keeps `npm ci` quick.
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1200,
  },
  server: { proxy: { '/api': { target: 'http://127.0.0.1:8080', ws: true } } },
});

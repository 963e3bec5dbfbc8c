import react from '@vitejs/plugin-react';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

// The server serves dist/ at `/` and answers the API and /__/firebase/init.json itself;
// `npm run dev -w packages/web` proxies those to a Hearth on :9000.
const hearth = process.env.HEARTH_URL ?? 'http://127.0.0.1:9000';

/**
 * Writes a .br and a .gz beside each script, style and page, which the server sends to browsers
 * that accept them (@fastify/static's preCompressed): a third of the bytes on a slow connection,
 * compressed once at build time instead of on every request.
 */
function precompress(): Plugin {
  return {
    name: 'hearth-precompress',
    apply: 'build',
    // After writing: vite still rewrites chunks (preload lists) while generating the bundle.
    writeBundle(options, bundle) {
      const outDir = options.dir ?? 'dist';
      for (const fileName of Object.keys(bundle)) {
        if (!/\.(js|css|html|svg)$/.test(fileName)) continue;
        const bytes = readFileSync(join(outDir, fileName));
        if (bytes.length < 1024) continue;
        writeFileSync(join(outDir, `${fileName}.gz`), gzipSync(bytes, { level: 9 }));
        writeFileSync(join(outDir, `${fileName}.br`), brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
      }
    },
  };
}

export default defineConfig({
  base: '/',
  plugins: [react(), precompress()],
  build: { outDir: 'dist', emptyOutDir: true },
  server: {
    proxy: {
      '/__/': hearth,
      '/identitytoolkit.googleapis.com/': hearth,
      '/securetoken.googleapis.com/': hearth,
    },
  },
});

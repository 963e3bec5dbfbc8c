import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The server serves dist/ at `/` and answers the API and /__/firebase/init.json itself;
// `npm run dev -w packages/web` proxies those to a Hearth on :9000.
const hearth = process.env.HEARTH_URL ?? 'http://127.0.0.1:9000';

export default defineConfig({
  base: '/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true },
  server: {
    proxy: {
      '/__/': hearth,
      '/identitytoolkit.googleapis.com/': hearth,
      '/securetoken.googleapis.com/': hearth,
    },
  },
});

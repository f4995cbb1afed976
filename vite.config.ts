/** The playground app: a static site built by Vite; `npm start` builds it and serves `dist/`. */
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  plugins: [react()],
  build: { target: 'es2022', sourcemap: true },
  worker: { format: 'es' },
});

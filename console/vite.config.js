import { defineConfig } from 'vite'
import vue from '@vitejs/plugin-vue'

// The build is served by xxl-scheduler from its console folder at `/`:
// relative asset paths, no inline scripts (CSP script-src 'self'), no
// source maps (kept small; rebuild from src/ to debug).
export default defineConfig({
  base: './',
  plugins: [vue()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 800,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8090' },
  },
})

import { defineConfig } from 'vite'
import vue from '@vitejs/plugin-vue'

// The build is served by xxl-scheduler from its console folder at `/`,
// which answers index.html for any path that is not a file: asset paths
// are absolute (`/assets/…`), so that a deep link such as /jobs/1/glue
// loads them too (src/main.js then shows its page).  No inline scripts
// (CSP script-src 'self'), no source maps (kept small; rebuild from src/
// to debug).
export default defineConfig({
  base: '/',
  plugins: [vue()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 800,
    // Libraries in chunks of their own: their file names (content hashes)
    // stay the same when only the console's code changes, so a rebuild
    // rewrites small files only
    rollupOptions: {
      output: {
        manualChunks(id) {
          if (!id.includes('node_modules')) return undefined
          if (/node_modules\/(@codemirror|codemirror|@lezer|style-mod|w3c-keyname|crelt|@marijn)\//.test(id)) return 'codemirror'
          if (/node_modules\/(chart\.js|@kurkle)\//.test(id)) return 'chartjs'
          if (/node_modules\/@dagrejs\//.test(id)) return 'dagre'
          return 'vue'
        },
      },
    },
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8090' },
  },
})

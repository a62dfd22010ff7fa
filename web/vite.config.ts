/**
 * The web app's build (docs/decisions/0013-web-app.md): `npm start` and `npm test` run it
 * through scripts/build-if-stale.mjs when web/ or src/shared changed; the server serves
 * dist/web (src/features/webapp).
 */
import path from 'node:path';
import preact from '@preact/preset-vite';
import sharp from 'sharp';
import { defineConfig, type Plugin } from 'vite';
import { compression } from 'vite-plugin-compression2';
import { VitePWA } from 'vite-plugin-pwa';

const WEB = import.meta.dirname;
const ICON = path.join(WEB, 'public', 'icon.svg');
/** PNG sizes the manifest lists: Chromium's install prompt wants 192 and 512. */
const ICON_SIZES = [192, 512];

/** The PNG icons, rendered from icon.svg at build time, so only the SVG is kept in the repository. */
function pngIcons(): Plugin {
  return {
    name: 'keepsake-png-icons',
    apply: 'build',
    async generateBundle() {
      for (const size of ICON_SIZES) {
        const source = await sharp(ICON, { density: (72 * size) / 48 })
          .resize(size, size)
          .png()
          .toBuffer();
        this.emitFile({ type: 'asset', fileName: `icon-${size}.png`, source });
      }
    },
  };
}

export default defineConfig({
  root: WEB,
  build: {
    outDir: path.join(WEB, '..', 'dist', 'web'),
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    // Every browser the app supports preloads modules itself (Safari since 17); without the
    // polyfill an older one loads the lazy chunks a little later, and 80 KB holds (benchmarks.md).
    modulePreload: { polyfill: false },
  },
  server: { proxy: { '/api': 'http://127.0.0.1:3000' } },
  plugins: [
    preact(),
    pngIcons(),
    VitePWA({
      // main.tsx registers the worker itself, only where browsers allow one (secure contexts).
      injectRegister: null,
      registerType: 'autoUpdate',
      manifest: {
        name: 'Keepsake Notes',
        short_name: 'Notes',
        description: 'Your notes, on your server, offline too',
        start_url: '/',
        scope: '/',
        display: 'standalone',
        background_color: '#ffffff',
        theme_color: '#ffffff',
        icons: [
          ...ICON_SIZES.map((size) => ({
            src: `/icon-${size}.png`,
            sizes: `${size}x${size}`,
            type: 'image/png',
          })),
          { src: '/icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
          { src: '/icon.svg', sizes: 'any', type: 'image/svg+xml' },
        ],
        // web/public/share-target.js receives the POST; web/src/app/launch.ts makes the note.
        share_target: {
          action: '/share',
          method: 'POST',
          enctype: 'multipart/form-data',
          params: {
            title: 'title',
            text: 'text',
            url: 'url',
            files: [{ name: 'images', accept: ['image/*'] }],
          },
        },
        shortcuts: [
          { name: 'New note', url: '/?new=note' },
          { name: 'New list', url: '/?new=list' },
        ],
      },
      workbox: {
        importScripts: ['/share-target.js', '/reminder-push.js'],
        globPatterns: ['**/*.{js,css,html,svg,png,webmanifest}'],
        // A navigation the server would answer with the app answers it from the cache offline.
        navigateFallback: '/index.html',
        navigateFallbackDenylist: [/^\/api\//, /^\/s\//],
        skipWaiting: true,
        clientsClaim: true,
        cleanupOutdatedCaches: true,
      },
    }),
    compression({ algorithms: ['brotliCompress', 'gzip'], exclude: [/\.(png|br|gz)$/] }),
  ],
});

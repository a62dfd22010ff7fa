/*
 * The manifest's share_target (web/vite.config.ts): Android and Chromium POST what is shared
 * (title, text, url, images) to /share. The service worker (this script is imported into the
 * generated one, before Workbox's handlers) keeps it in the cache "keepsake-share" and opens
 * the app at /?share=<id>, which makes the new note (web/src/app/launch.ts).
 */
const SHARE_CACHE = 'keepsake-share';

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== 'POST' || url.pathname !== '/share') return;
  event.respondWith(
    (async () => {
      const form = await event.request.formData();
      const id = crypto.randomUUID();
      const cache = await caches.open(SHARE_CACHE);
      const files = form.getAll('images').filter((value) => value instanceof File && value.size > 0);
      for (const [index, file] of files.entries()) {
        const headers = { 'content-type': file.type, 'x-filename': encodeURIComponent(file.name) };
        await cache.put(`/share/${id}/file/${index}`, new Response(file, { headers }));
      }
      const text = (name) => String(form.get(name) ?? '');
      const shared = { title: text('title'), text: text('text'), url: text('url'), files: files.length };
      await cache.put(`/share/${id}`, Response.json(shared));
      return Response.redirect(`/?share=${id}`, 303);
    })(),
  );
});

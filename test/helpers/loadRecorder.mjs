// Module hooks (node:module register) that append the URL of every module loaded through
// `import` to the file LOADED_URLS_FILE names; test/lazy-modules.test.ts reads it.
import fs from 'node:fs';

export async function load(url, context, nextLoad) {
  fs.appendFileSync(process.env.LOADED_URLS_FILE, `${url}\n`);
  return nextLoad(url, context);
}

// Bundles app.jsx with the pinned npm packages (npm/package-lock.json) into <out>/app.js and
// writes <out>/index.html; run by mk/copilotkit.mk from the cached npm folder:
//   node build.mjs <node_modules dir> <out dir>
import { createRequire } from "node:module";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const [modules, out] = process.argv.slice(2);
if (!modules || !out) {
  console.error("usage: node build.mjs <node_modules dir> <out dir>");
  process.exit(2);
}
const { build } = createRequire(join(resolve(modules), "noop.js"))("esbuild");
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(here, "app.jsx")],
  outfile: join(out, "app.js"),
  bundle: true,
  minify: true,
  format: "iife",
  target: ["es2022"],
  platform: "browser",
  jsx: "automatic",
  nodePaths: [resolve(modules)],
  loader: { ".css": "empty", ".woff": "empty", ".woff2": "empty", ".ttf": "empty" },
  logLevel: "warning",
  define: { "process.env.NODE_ENV": '"production"', global: "globalThis" },
});
writeFileSync(
  join(out, "index.html"),
  '<!doctype html><html><head><meta charset="utf-8"><title>CopilotKit lane</title></head>' +
    '<body><div id="root"></div><script src="app.js"></script></body></html>\n',
);

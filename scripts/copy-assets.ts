/**
 * The second half of `npm run build`: tsc writes only JavaScript, so every other file under src/
 * (the dashboard's and the API docs' static pages, read from beside their modules) is copied to
 * the same place under dist/src/. Plain TypeScript that Node runs as it is.
 */
import { cpSync, statSync } from "node:fs";

cpSync("src", "dist/src", {
  recursive: true,
  filter: (source) => statSync(source).isDirectory() || !source.endsWith(".ts"),
});

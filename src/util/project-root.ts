/**
 * The project's root folder (the one holding package.json), found from a module's own folder. The
 * same module runs from src/ under tsx and from dist/src/ once compiled, one level deeper, so a
 * fixed number of `..` would point at dist/ there.
 */
import { existsSync } from "node:fs";
import path from "node:path";

export function projectRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

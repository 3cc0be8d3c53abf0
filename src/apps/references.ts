import { isObject } from "../util/json.ts";

/**
 * Multimedia references of an application source (CONTRACT §4): every `jr://file/…` path in any
 * string of the document (form XML inside `_attachments` included) and the keys of
 * `multimedia_map`, with its media type. Paths are compared case-insensitively; the first spelling
 * seen is kept as canonical.
 */
export interface Reference {
  path: string;
  mediaType: MediaType;
}

/** Media types of CONTRACT §4 "Application source": by extension, else by folder. */
export type MediaType = "image" | "audio" | "video";

const EXTENSIONS: Record<string, MediaType> = {
  png: "image",
  jpg: "image",
  jpeg: "image",
  gif: "image",
  bmp: "image",
  svg: "image",
  webp: "image",
  mp3: "audio",
  wav: "audio",
  ogg: "audio",
  m4a: "audio",
  amr: "audio",
  mp4: "video",
  mov: "video",
  avi: "video",
  webm: "video",
};

const FOLDER = /\/(image|audio|video)\//i;

/** The media type a path names: its extension (3gp: audio under an audio folder, else video), else its folder. */
export function mediaTypeOfPath(path: string): MediaType | undefined {
  const lower = path.toLowerCase();
  const ext = /\.([a-z0-9]+)$/.exec(lower)?.[1];
  if (ext === "3gp") return /\/audio\//.test(lower) ? "audio" : "video";
  if (ext && EXTENSIONS[ext]) return EXTENSIONS[ext];
  return FOLDER.exec(lower)?.[1] as MediaType | undefined;
}

const REFERENCE = /jr:\/\/file\/[^\s"'<>]+/g;

/** The deepest nesting an application source may have (AppService refuses deeper ones). */
export const MAX_SOURCE_DEPTH = 1000;

export function findReferences(source: unknown): Reference[] {
  const found = new Map<string, Reference>();
  const add = (path: string) => {
    const mediaType = mediaTypeOfPath(path);
    if (mediaType && !found.has(path.toLowerCase())) found.set(path.toLowerCase(), { path, mediaType });
  };
  const walk = (value: unknown, depth: number): void => {
    if (depth > MAX_SOURCE_DEPTH) return;
    if (typeof value === "string") {
      // A string value that starts with jr://file/ is one path as a whole (it may hold spaces);
      // inside other strings (form XML) a path ends at whitespace, a quote or a tag.
      if (value.startsWith("jr://file/")) add(value);
      else if (value.includes("jr://file/")) for (const match of value.matchAll(REFERENCE)) add(match[0]);
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, depth + 1);
    } else if (isObject(value)) {
      for (const item of Object.values(value)) walk(item, depth + 1);
    }
  };
  walk(source, 0);
  const map = (source as { multimedia_map?: unknown })?.multimedia_map;
  if (isObject(map)) {
    for (const key of Object.keys(map)) if (key.startsWith("jr://file/")) add(key);
  }
  return [...found.values()];
}

/** `jr://file/` + the archive path (leading `/` removed), unless it already starts so. */
export function referencePathOf(entryName: string): string {
  const path = entryName.replace(/^\/+/, "");
  return path.toLowerCase().startsWith("jr://file/") ? path : `jr://file/${path}`;
}

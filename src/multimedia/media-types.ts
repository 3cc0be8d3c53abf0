/** Media types of CONTRACT §4: by extension, else by folder; the class names the wire emits. */

export type MediaType = "image" | "audio" | "video";

export const MEDIA_CLASS: Record<MediaType, "AppImage" | "AppAudio" | "AppVideo"> = {
  image: "AppImage",
  audio: "AppAudio",
  video: "AppVideo",
};

export const MEDIA_LABEL: Record<MediaType, string> = { image: "Image", audio: "Audio", video: "Video" };

const EXTENSIONS: Record<string, MediaType> = {
  png: "image", jpg: "image", jpeg: "image", gif: "image", bmp: "image", svg: "image", webp: "image",
  mp3: "audio", wav: "audio", ogg: "audio", m4a: "audio", amr: "audio",
  mp4: "video", mov: "video", avi: "video", webm: "video",
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

/** The media type of sniffed content (a MIME type), if it is media at all. */
export function mediaTypeOfMime(mime: string | undefined): MediaType | undefined {
  const top = mime?.split("/")[0];
  return top === "image" || top === "audio" || top === "video" ? top : undefined;
}

const CONTENT_TYPES: Record<string, string> = {
  png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", bmp: "image/bmp", svg: "image/svg+xml",
  webp: "image/webp", mp3: "audio/mpeg", wav: "audio/wav", ogg: "audio/ogg", m4a: "audio/mp4", amr: "audio/amr",
  mp4: "video/mp4", "3gp": "video/3gpp", mov: "video/quicktime", avi: "video/x-msvideo", webm: "video/webm",
};

export function contentTypeOfPath(path: string): string | undefined {
  return CONTENT_TYPES[/\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase() ?? ""];
}

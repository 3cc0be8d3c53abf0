import { mediaTypeOfPath, type MediaType } from "../../apps/references.ts";

/**
 * Media types of CONTRACT §4 "Processing": an archive entry's from its content (magic bytes), else
 * from its path (the classification the app's references use, owned by apps/references.ts); the
 * class names the wire emits.
 */

export const MEDIA_CLASS: Record<MediaType, "AppImage" | "AppAudio" | "AppVideo"> = {
  image: "AppImage",
  audio: "AppAudio",
  video: "AppVideo",
};

export const MEDIA_LABEL: Record<MediaType, string> = { image: "Image", audio: "Audio", video: "Video" };

/** The media type of sniffed content (a MIME type), if it is media at all. */
function mediaTypeOfMime(mime: string | undefined): MediaType | undefined {
  const top = mime?.split("/")[0];
  return top === "image" || top === "audio" || top === "video" ? top : undefined;
}

/**
 * Containers that carry audio alone as well as video (ISO base media: mp4, m4a, 3gp, mov; WebM,
 * Matroska, Ogg): their magic says which container, not which of the two the file is.
 */
const AUDIO_OR_VIDEO_CONTAINERS = new Set([
  "video/mp4",
  "audio/mp4",
  "audio/x-m4a",
  "video/x-m4v",
  "video/3gpp",
  "video/3gpp2",
  "video/quicktime",
  "video/webm",
  "audio/webm",
  "video/x-matroska",
  "audio/x-matroska",
  "video/ogg",
  "audio/ogg",
]);

/**
 * The media type and content type of an archive entry (CONTRACT §4 "Processing"): from the sniffed
 * content, else from the `jr://file/` path. Content naming an audio-or-video container defers to
 * the path for which of the two it is, so that a 3gp recording under an audio folder is audio (the
 * type its reference has), while PNG bytes named .mp3 stay an image.
 */
export function mediaOfContent(mime: string | undefined, path: string): { mediaType: MediaType; contentType: string } | undefined {
  const sniffed = mediaTypeOfMime(mime);
  const named = mediaTypeOfPath(path);
  if (sniffed && mime) {
    const base = mime.split(";")[0].trim().toLowerCase();
    if (AUDIO_OR_VIDEO_CONTAINERS.has(base) && (named === "audio" || named === "video") && named !== sniffed) {
      const subtype = base.split("/")[1].replace(/^x-m4[av]$/, "mp4");
      return { mediaType: named, contentType: `${named}/${subtype}` };
    }
    return { mediaType: sniffed, contentType: mime };
  }
  if (!named) return undefined;
  let contentType = contentTypeOfPath(path) ?? "application/octet-stream";
  if (named === "audio" && contentType.startsWith("video/")) contentType = contentType.replace(/^video\//, "audio/"); // .3gp under audio/
  return { mediaType: named, contentType };
}

const CONTENT_TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  bmp: "image/bmp",
  svg: "image/svg+xml",
  webp: "image/webp",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  ogg: "audio/ogg",
  m4a: "audio/mp4",
  amr: "audio/amr",
  mp4: "video/mp4",
  "3gp": "video/3gpp",
  mov: "video/quicktime",
  avi: "video/x-msvideo",
  webm: "video/webm",
};

function contentTypeOfPath(path: string): string | undefined {
  return CONTENT_TYPES[/\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase() ?? ""];
}

import { describe, expect, it } from "vitest";
import { findReferences, mediaTypeOfPath, referencePathOf } from "../../src/apps/references.ts";

/**
 * CONTRACT §4 "Application source": multimedia references are every string value anywhere in the
 * document (form XML inside `_attachments` included) that starts with `jr://file/`, and the keys
 * of `multimedia_map`; the media type comes from the extension (3gp: audio under an audio path)
 * or the folder. §4 "Processing": an entry path, leading `/` removed, is prefixed with
 * `jr://file/` unless it already starts so.
 */

const paths = (source: unknown) => findReferences(source).map((r) => r.path);

describe("findReferences: every jr://file/ string anywhere in the document", () => {
  it("finds strings at any depth, in objects and arrays, in document order", () => {
    const source = {
      a: "jr://file/commcare/image/top.png",
      modules: [
        { media_image: { en: "jr://file/commcare/image/module.jpg" }, forms: [{ media_audio: { en: "jr://file/commcare/audio/form.mp3" } }] },
        [["jr://file/commcare/video/nested.mp4"]],
      ],
    };
    expect(findReferences(source)).toEqual([
      { path: "jr://file/commcare/image/top.png", mediaType: "image" },
      { path: "jr://file/commcare/image/module.jpg", mediaType: "image" },
      { path: "jr://file/commcare/audio/form.mp3", mediaType: "audio" },
      { path: "jr://file/commcare/video/nested.mp4", mediaType: "video" },
    ]);
  });

  it("finds references inside form XML strings in _attachments", () => {
    const xml =
      '<?xml version="1.0"?><h:html><h:head><model><itext><translation lang="en">' +
      '<text id="q1"><value>Question</value><value form="image">jr://file/commcare/image/q1.png</value>' +
      '<value form="audio">jr://file/commcare/audio/q1.mp3</value></text>' +
      "<text id=\"q2\"><value form='video'>jr://file/commcare/video/q2.3gp</value></text>" +
      '</translation></itext></model></h:head><h:body><upload mediatype="image/*" ref="/data/x"/></h:body></h:html>';
    expect(findReferences({ _attachments: { "abc.xml": xml } })).toEqual([
      { path: "jr://file/commcare/image/q1.png", mediaType: "image" },
      { path: "jr://file/commcare/audio/q1.mp3", mediaType: "audio" },
      { path: "jr://file/commcare/video/q2.3gp", mediaType: "video" },
    ]);
  });

  it("includes the keys of multimedia_map (not its values)", () => {
    const source = {
      multimedia_map: {
        "jr://file/commcare/image/mapped.png": { multimedia_id: "1", media_type: "CommCareImage" },
        "jr://file/commcare/audio/mapped.wav": { multimedia_id: "2", media_type: "CommCareAudio" },
      },
    };
    expect(findReferences(source)).toEqual([
      { path: "jr://file/commcare/image/mapped.png", mediaType: "image" },
      { path: "jr://file/commcare/audio/mapped.wav", mediaType: "audio" },
    ]);
  });

  it("paths are one reference whatever their case; the first spelling seen is kept", () => {
    const source = {
      first: "jr://file/commcare/image/Logo.PNG",
      second: "jr://file/COMMCARE/image/logo.png",
      multimedia_map: { "jr://file/commcare/IMAGE/LOGO.png": {} },
    };
    expect(paths(source)).toEqual(["jr://file/commcare/image/Logo.PNG"]);
  });

  it("a string value that starts with jr://file/ is one reference as a whole, spaces included", () => {
    expect(paths({ media_image: { en: "jr://file/commcare/image/my logo.png" } })).toEqual(["jr://file/commcare/image/my logo.png"]);
  });

  it("ignores strings that do not reference jr://file/, and keys outside multimedia_map", () => {
    const source = {
      "jr://file/commcare/image/key.png": "value",
      other: "jr://images/x.png",
      url: "https://example.org/x.png",
      plain: "commcare/image/y.png",
      number: 5,
      flag: true,
      nothing: null,
    };
    expect(findReferences(source)).toEqual([]);
  });

  it("a path that names no media type (no media extension, no media folder) is not a reference", () => {
    expect(paths({ a: "jr://file/commcare/text/readme.txt", b: "jr://file/form.xml", c: "jr://file/commcare/image/noext" })).toEqual([
      "jr://file/commcare/image/noext",
    ]);
  });

  it("finds a reference nested hundreds of levels deep", () => {
    let source: unknown = "jr://file/deep.png";
    for (let i = 0; i < 500; i++) source = i % 2 ? [source] : { k: source };
    expect(paths(source)).toEqual(["jr://file/deep.png"]);
  });

  it("works on non-object sources without throwing", () => {
    expect(findReferences(null)).toEqual([]);
    expect(findReferences("jr://file/a.png")).toEqual([{ path: "jr://file/a.png", mediaType: "image" }]);
    expect(findReferences([{ x: "jr://file/a.mp3" }])).toEqual([{ path: "jr://file/a.mp3", mediaType: "audio" }]);
  });
});

describe("media type of a reference: extension, else folder", () => {
  it.each([
    ["png", "image"],
    ["jpg", "image"],
    ["jpeg", "image"],
    ["gif", "image"],
    ["bmp", "image"],
    ["svg", "image"],
    ["webp", "image"],
    ["mp3", "audio"],
    ["wav", "audio"],
    ["ogg", "audio"],
    ["m4a", "audio"],
    ["amr", "audio"],
    ["mp4", "video"],
    ["mov", "video"],
    ["avi", "video"],
    ["webm", "video"],
  ])("extension .%s → %s (any case, any folder)", (ext, type) => {
    expect(mediaTypeOfPath(`jr://file/commcare/misc/file.${ext}`)).toBe(type);
    expect(mediaTypeOfPath(`jr://file/commcare/misc/FILE.${ext.toUpperCase()}`)).toBe(type);
  });

  it("the extension wins over the folder", () => {
    expect(mediaTypeOfPath("jr://file/commcare/audio/picture.png")).toBe("image");
    expect(mediaTypeOfPath("jr://file/commcare/image/sound.mp3")).toBe("audio");
  });

  it("3gp is audio under an audio folder, else video", () => {
    expect(findReferences({ a: "jr://file/commcare/audio/rec.3gp", b: "jr://file/commcare/video/clip.3gp", c: "jr://file/clip2.3GP" })).toEqual([
      { path: "jr://file/commcare/audio/rec.3gp", mediaType: "audio" },
      { path: "jr://file/commcare/video/clip.3gp", mediaType: "video" },
      { path: "jr://file/clip2.3GP", mediaType: "video" },
    ]);
    expect(mediaTypeOfPath("jr://file/commcare/Audio/REC.3GP")).toBe("audio");
  });

  it("without a media extension the folder decides: …/image/, …/audio/, …/video/", () => {
    expect(mediaTypeOfPath("jr://file/commcare/image/a")).toBe("image");
    expect(mediaTypeOfPath("jr://file/commcare/audio/b.dat")).toBe("audio");
    expect(mediaTypeOfPath("jr://file/commcare/VIDEO/c")).toBe("video");
    expect(mediaTypeOfPath("jr://file/commcare/images/d")).toBeUndefined();
    expect(mediaTypeOfPath("jr://file/commcare/e.txt")).toBeUndefined();
  });
});

describe("referencePathOf: archive entry path → jr://file/ path", () => {
  it("prefixes jr://file/", () => {
    expect(referencePathOf("commcare/image/a.png")).toBe("jr://file/commcare/image/a.png");
  });

  it("removes leading slashes first", () => {
    expect(referencePathOf("/commcare/image/a.png")).toBe("jr://file/commcare/image/a.png");
    expect(referencePathOf("//a.png")).toBe("jr://file/a.png");
  });

  it("keeps a path that already starts with jr://file/ (any case) as is", () => {
    expect(referencePathOf("jr://file/commcare/a.png")).toBe("jr://file/commcare/a.png");
    expect(referencePathOf("JR://FILE/commcare/a.png")).toBe("JR://FILE/commcare/a.png");
  });

  it("keeps the case of the rest of the path (matching is case-insensitive elsewhere)", () => {
    expect(referencePathOf("CommCare/Image/A.PNG")).toBe("jr://file/CommCare/Image/A.PNG");
  });
});

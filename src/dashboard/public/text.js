// Text from the server (file names, entry paths, app names, messages: whatever users typed) as the
// page shows it. It always goes in as text, never as markup; and its bidirectional controls are shown
// as visible marks, so that a name cannot reorder what is shown (issue #24 G8: the entry
// "commcare/image/\u202Eevil\u202C.png" was shown as "commcare/image/live.png").

/** LRM, RLM, ALM, the embeddings and overrides (LRE RLE PDF LRO RLO) and the isolates (LRI RLI FSI PDI) */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** `value` as text to show: each bidirectional control replaced by a visible ⟨U+XXXX⟩. */
export function shown(value) {
  return String(value ?? "").replace(
    BIDI_CONTROLS,
    (control) => `\u27E8U+${control.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}\u27E9`,
  );
}

/** Sets a node's text to `value` as shown. */
export function setText(node, value) {
  node.textContent = shown(value);
}

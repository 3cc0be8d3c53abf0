import { statusWhenOnly } from "./status-when-only.ts";

/** An upload over the limit that left nothing to answer: 413, as REST answers it. */
export const usePayloadTooLarge = statusWhenOnly("PAYLOAD_TOO_LARGE", 413);

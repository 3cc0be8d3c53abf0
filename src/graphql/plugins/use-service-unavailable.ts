import { SERVICE_UNAVAILABLE_RETRY_SECONDS } from "../../errors.ts";
import { statusWhenOnly } from "./status-when-only.ts";

/** A database outage that left nothing to answer: 503 with Retry-After, as REST answers it. */
export const useServiceUnavailable = statusWhenOnly("SERVICE_UNAVAILABLE", 503, {
  "Retry-After": String(SERVICE_UNAVAILABLE_RETRY_SECONDS),
});

import "reflect-metadata";
import { afterAll, afterEach } from "vitest";
import { setLogLevel } from "../../src/log.ts";
import { checkingFetch, failOnFetchMismatches } from "../helpers/openapi.ts";

setLogLevel(process.env.TEST_LOG === "1" ? "info" : "silent");

// every REST response a test gets through fetch is checked against the OpenAPI document, as
// app.http()'s are (test/helpers/openapi.ts)
globalThis.fetch = checkingFetch(globalThis.fetch);
afterEach(failOnFetchMismatches);
afterAll(failOnFetchMismatches);

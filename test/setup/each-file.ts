import "reflect-metadata";
import { afterAll, afterEach } from "vitest";
import { setLogLevel } from "../../src/log.ts";
import { captureLogLines } from "../helpers/log.ts";
import { checkingFetch, failOnFetchMismatches } from "../helpers/openapi.ts";

// What runs is what is tested: the code logs at its default level (info), into a buffer a test can
// read (test/helpers/log.ts); TEST_LOG=1 shows the lines as well.
setLogLevel("info");
captureLogLines(process.env.TEST_LOG === "1");

// every REST response a test gets through fetch is checked against the OpenAPI document, as
// app.http()'s are (test/helpers/openapi.ts)
globalThis.fetch = checkingFetch(globalThis.fetch);
afterEach(failOnFetchMismatches);
afterAll(failOnFetchMismatches);

import "reflect-metadata";
import { setLogLevel } from "../../src/log.ts";

setLogLevel(process.env.TEST_LOG === "1" ? "info" : "silent");

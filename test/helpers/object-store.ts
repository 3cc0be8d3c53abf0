/**
 * An S3-compatible store for the tests: `@20minutes/s3rver` on a free loopback port, its files in a
 * temporary directory, request signatures checked (a wrong secret is refused). Its one bug: calls
 * on a bucket itself (CreateBucket, ListObjectsV2) fail the signature check because the SDK signs
 * `/bucket/` and it checks `/bucket`, so the bucket is created at start (`configureBuckets`) and
 * objects are listed from its files, never through the API. It does not implement
 * AbortMultipartUpload (405): the parts of an upload cut short stay in its directory.
 */
import { readdir } from "node:fs/promises";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import S3rver from "@20minutes/s3rver";
import type { ObjectStoreConfig } from "../../src/config.ts";

/** s3rver's one account. */
export const S3RVER_CREDENTIALS = { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER" };

export interface TestObjectStore {
  endpoint: string;
  bucket: string;
  /** the server's environment for this store: BLOB_STORE_URL, S3_* and the credentials */
  env(prefix?: string, overrides?: Record<string, string>): Record<string, string>;
  /** the config the server would load from `env(prefix)` */
  config(prefix?: string): ObjectStoreConfig;
  /** every object key of the bucket (from s3rver's files) */
  keys(): Promise<string[]>;
  close(): Promise<void>;
}

/** s3rver keeps an object `a/b` as `<dir>/<bucket>/a/b._S3rver_object` (with its metadata beside it). */
const OBJECT_SUFFIX = "._S3rver_object";

async function objectFiles(root: string, dir = root): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await objectFiles(root, full)));
    else if (entry.name.endsWith(OBJECT_SUFFIX)) found.push(path.relative(root, full).slice(0, -OBJECT_SUFFIX.length).split(path.sep).join("/"));
  }
  return found.sort();
}

export async function startObjectStore(bucket = "media"): Promise<TestObjectStore> {
  const directory = await mkdtemp(path.join(os.tmpdir(), "s3rver-"));
  // port 0: the system picks a free port as s3rver listens. A port probed free beforehand can be
  // taken by another socket before s3rver listens, and s3rver then never settles its run() (the
  // listen error is thrown as an uncaught exception instead).
  const server = new S3rver({ address: "127.0.0.1", port: 0, directory, silent: true, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const env = (prefix = "", overrides: Record<string, string> = {}) => ({
    BLOB_STORE_URL: `s3://${bucket}${prefix ? `/${prefix}` : ""}`,
    S3_ENDPOINT: endpoint,
    S3_FORCE_PATH_STYLE: "true",
    ...S3RVER_CREDENTIALS,
    ...overrides,
  });
  return {
    endpoint,
    bucket,
    env,
    config: (prefix = "") => ({
      bucket,
      prefix: prefix ? `${prefix}/` : "",
      endpoint,
      region: "us-east-1",
      forcePathStyle: true,
      presignSeconds: 300,
    }),
    keys: () => objectFiles(path.join(directory, bucket)),
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

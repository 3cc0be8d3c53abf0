/** The part of `@20minutes/s3rver` (which ships no types) the tests use: test/helpers/object-store.ts. */
declare module "@20minutes/s3rver" {
  interface S3rverOptions {
    address: string;
    port: number;
    directory: string;
    silent: boolean;
    configureBuckets: { name: string }[];
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    /** the address it listens on (the port chosen by the system for port 0) */
    run(): Promise<import("node:net").AddressInfo>;
    close(): Promise<void>;
  }
}

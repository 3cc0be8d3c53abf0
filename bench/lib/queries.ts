/**
 * The operations the benchmark parts send as a dashboard would, kept in one place so that the
 * feed and delivery parts measure the same selection.
 */

/** A dashboard's job feed: what it shows of a job while it runs, and the result's counts once it is done (no file lists). */
export const jobFeedSubscription = (operationName: string): string => `subscription ${operationName}($domain: String!) {
  multimediaJobs(domain: $domain) {
    id processingId fileName sizeBytes state createdAt startedAt finishedAt attempts errors
    app { appId name }
    uploadedBy { username }
    progress { current total percent }
    result { totalFiles processedFiles matchedCount unmatchedCount imageCount audioCount videoCount }
  }
}`;

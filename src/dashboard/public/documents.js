// Every GraphQL document the dashboard sends (test/dashboard/documents.test.ts validates them
// against schema.graphql, so that a change of the API that breaks the page fails a test).

/** The fields of MultimediaJob the page shows; used by the list query, the feed and the upload. */
const JOB_FIELDS = `
  fragment DashboardJob on MultimediaJob {
    id
    processingId
    fileName
    sizeBytes
    state
    createdAt
    startedAt
    finishedAt
    attempts
    errors
    app { appId name }
    uploadedBy { username }
    progress { current total percent }
    result {
      totalFiles processedFiles matchedCount unmatchedCount imageCount audioCount videoCount
      matchedFiles { path originalPath mediaClass size }
      unmatchedFiles { path reason }
      skippedFiles { path reason }
    }
  }
`;

export const ME = "query DashboardMe { me { username isSuperuser memberships { domain } } }";
export const APPS = "query DashboardApps($domain: String!) { apps(domain: $domain) { appId name } }";
export const JOBS = `${JOB_FIELDS}
  query DashboardJobs($domain: String!, $first: Int, $after: String) {
    multimediaJobs(domain: $domain, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes { ...DashboardJob }
    }
  }`;
export const JOB = `${JOB_FIELDS}
  query DashboardJob($domain: String!, $processingId: ID!) {
    multimediaJob(domain: $domain, processingId: $processingId) { ...DashboardJob }
  }`;
export const FEED = `${JOB_FIELDS}
  subscription DashboardFeed($domain: String!) {
    multimediaJobs(domain: $domain) { ...DashboardJob }
  }`;
export const UPLOAD = `mutation DashboardUpload($domain: String!, $appId: ID!, $file: Upload!) {
  uploadMultimedia(domain: $domain, appId: $appId, file: $file)
}`;

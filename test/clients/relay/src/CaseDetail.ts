import { graphql } from "relay-runtime";

/**
 * A case's details, refetchable on their own: Relay builds `CaseDetailRefetchQuery` as
 * `node(id: $id) { ...CaseDetail_case }`, so this compiles only while Case implements Node and
 * Query.node(id: ID!) exists (CONTRACT §7.3).
 */
export const caseDetail = graphql`
  fragment CaseDetail_case on Case @refetchable(queryName: "CaseDetailRefetchQuery") {
    id
    caseId
    caseName
    caseType
    closed
    lastModified
  }
`;

import { Field, InputType } from "type-graphql";

/** The date bounds of case and location filters, as their REST `.gt/.gte/.lt/.lte` parameters. */

const VALUE =
  "a date `YYYY-MM-DD` or an ISO 8601 datetime with or without offset (naive means UTC); an invalid value is BAD_USER_INPUT `Cannot parse datetime '<v>'`";

@InputType("DateRange", {
  description:
    "Bounds on a date field, as REST's `{field}.gt/.gte/.lt/.lte` parameters: each given bound applies (they AND). A date-only value covers its whole day.",
})
export class DateRangeInput {
  @Field(() => String, { nullable: true, description: `After this instant; a date means after the end of that day. Value: ${VALUE}.` })
  gt?: string | null;

  @Field(() => String, { nullable: true, description: `At or after this instant; a date means from 00:00 UTC that day. Value: ${VALUE}.` })
  gte?: string | null;

  @Field(() => String, { nullable: true, description: `Before this instant; a date means before 00:00 UTC that day. Value: ${VALUE}.` })
  lt?: string | null;

  @Field(() => String, { nullable: true, description: `At or before this instant; a date means through the end of that day. Value: ${VALUE}.` })
  lte?: string | null;
}

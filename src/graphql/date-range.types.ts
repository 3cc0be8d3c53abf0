import { Field, InputType } from "type-graphql";

/** The date bounds of case and location filters, as their REST `.gt/.gte/.lt/.lte` parameters. */

@InputType("DateRange", { description: "bounds as in REST: a date (whole day) or an ISO 8601 datetime" })
export class DateRangeInput {
  @Field(() => String, { nullable: true })
  gt?: string | null;

  @Field(() => String, { nullable: true })
  gte?: string | null;

  @Field(() => String, { nullable: true })
  lt?: string | null;

  @Field(() => String, { nullable: true })
  lte?: string | null;
}

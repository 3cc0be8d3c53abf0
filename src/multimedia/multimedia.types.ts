import { JSONObjectScalar } from "../graphql/scalars.ts";
import { Field, ID, Int, ObjectType } from "type-graphql";

/** GraphQL shapes of multimedia: the files an app maps, its references, and the upload jobs. */

@ObjectType("MultimediaFile")
export class MultimediaFileType {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  sha256!: string;

  @Field(() => String)
  md5!: string;

  @Field(() => Int)
  size!: number;

  @Field(() => String)
  contentType!: string;

  @Field(() => String, { description: "AppImage, AppAudio or AppVideo" })
  mediaClass!: string;
}

@ObjectType("MultimediaReference", { description: "a jr://file/ path the app refers to" })
export class MultimediaReferenceType {
  @Field(() => String)
  path!: string;

  @Field(() => String, { description: "image, audio or video" })
  mediaType!: string;

  @Field(() => Boolean, { description: "whether an uploaded file is mapped to it" })
  present!: boolean;

  @Field(() => MultimediaFileType, { nullable: true })
  file!: MultimediaFileType | null;
}

@ObjectType("MultimediaProgress")
export class MultimediaProgressType {
  @Field(() => Int)
  percent!: number;

  @Field(() => Int)
  current!: number;

  @Field(() => Int)
  total!: number;
}

@ObjectType("MultimediaJob", { description: "a multimedia upload's processing, as the REST status reports it" })
export class MultimediaJobType {
  @Field(() => ID)
  processingId!: string;

  @Field(() => Boolean)
  complete!: boolean;

  @Field(() => Boolean)
  inQueue!: boolean;

  @Field(() => Boolean, { description: "the task failed (REST answers 500)" })
  failed!: boolean;

  @Field(() => MultimediaProgressType)
  progress!: MultimediaProgressType;

  @Field(() => [String])
  errors!: string[];

  @Field(() => JSONObjectScalar, { nullable: true, description: "the REST result fields, once complete" })
  result!: Record<string, unknown> | null;
}

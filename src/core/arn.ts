/** Amazon Resource Names reduced to the parts an identity needs. */

export interface ParsedArn {
  partition: string;
  service: string;
  /** Empty for global services (IAM, S3). */
  region: string;
  /** Empty for S3 buckets; `aws` for AWS-managed resources. */
  account: string;
  /** `db` in `db:orders`, `function` in `function:fn`; absent for a bare id (S3 bucket). */
  resourceType?: string;
  /** The bare resource id: `orders`, `my-fn:prod`, `app/my-lb/50dc6c495c0c9188`. */
  id: string;
}

const ARN = /^arn:(aws[a-z-]*):([a-z0-9-]+):([a-z0-9-]*):(\d{12}|aws)?:(.+)$/i;

/**
 * Parse `arn:partition:service:region:account:resource`, where resource is `type/id`,
 * `type:id` or `id`. Returns undefined for anything that is not an ARN.
 */
export function parseArn(value: string): ParsedArn | undefined {
  const m = ARN.exec(value.trim());
  if (!m) return undefined;
  const [, partition = '', service = '', region = '', account = '', resource = ''] = m;
  const sep = resource.search(/[:/]/);
  const base = { partition, service: service.toLowerCase(), region, account };
  if (sep <= 0 || sep === resource.length - 1) return { ...base, id: resource };
  return { ...base, resourceType: resource.slice(0, sep), id: resource.slice(sep + 1) };
}

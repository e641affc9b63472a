/**
 * Typed errors mirroring ferrule's Python ones: the server sends `{kind, message, details}`
 * (`FerruleError.to_dict()`), and `errorFromDict` rebuilds the class of that kind, with
 * the same message and details. A kind this client does not know arrives as a plain
 * `FerruleError` keeping its `kind`.
 */

export type ErrorDetails = Record<string, unknown>;

/** One bad field of an `InvalidInputError`: its JSON path and what is wrong. */
export interface FieldError {
  path: string;
  message: string;
}

export class FerruleError extends Error {
  /** The error's kind on the wire (`invalid_input`, `unknown_operator`, ...). */
  readonly kind: string;
  readonly details: ErrorDetails;

  constructor(message: string, details: ErrorDetails = {}, kind?: string) {
    super(message);
    this.name = new.target.name;
    this.kind = kind ?? (new.target as unknown as { kind?: string }).kind ?? "ferrule_error";
    this.details = details;
  }

  static readonly kind: string = "ferrule_error";

  toDict(): { kind: string; message: string; details: ErrorDetails } {
    return { kind: this.kind, message: this.message, details: this.details };
  }
}

/** Bad input: `field` (or each of `errors`) names what is wrong, by path. */
export class InvalidInputError extends FerruleError {
  static override readonly kind: string = "invalid_input";

  constructor(message: string, details: ErrorDetails = {}, kind?: string) {
    super(message, details, kind);
  }

  /** Each bad field with its path (`$.messages[0].role`). */
  get errors(): FieldError[] {
    const errors = this.details["errors"];
    return Array.isArray(errors) ? (errors as FieldError[]) : [];
  }

  /** The first bad field's path. */
  get field(): string | undefined {
    return this.errors[0]?.path;
  }

  /** An error naming `field`, in the shape the server sends. */
  static forField(message: string, field: string): InvalidInputError {
    return new InvalidInputError(message, { errors: [{ path: field, message }] });
  }
}

export class UnknownOperatorError extends FerruleError {
  static override readonly kind: string = "unknown_operator";
}
export class UnknownComponentTypeError extends FerruleError {
  static override readonly kind: string = "unknown_component_type";
}
export class UnknownComponentError extends FerruleError {
  static override readonly kind: string = "unknown_component";
}
export class UnknownMethodError extends FerruleError {
  static override readonly kind: string = "unknown_method";
}
export class UnknownModelError extends FerruleError {
  static override readonly kind: string = "unknown_model";
}
export class DuplicateComponentError extends FerruleError {
  static override readonly kind: string = "duplicate_component";
}
export class PluginError extends FerruleError {
  static override readonly kind: string = "plugin_error";
}
export class PluginLoadError extends FerruleError {
  static override readonly kind: string = "plugin_load_error";
}
export class InvalidOutputError extends PluginError {
  static override readonly kind: string = "invalid_output";
}
export class UnsupportedContentError extends InvalidInputError {
  static override readonly kind: string = "unsupported_content";
}
export class RequestTooLargeError extends InvalidInputError {
  static override readonly kind: string = "request_too_large";
}
export class UnsupportedMediaTypeError extends InvalidInputError {
  static override readonly kind: string = "unsupported_media_type";
}
export class RequestTimeoutError extends InvalidInputError {
  static override readonly kind: string = "request_timeout";
}
/** The server wants a bearer token and got none, or another one. */
export class UnauthorizedError extends FerruleError {
  static override readonly kind: string = "unauthorized";
}
export class MisdirectedRequestError extends FerruleError {
  static override readonly kind: string = "misdirected_request";
}
export class CrossOriginError extends FerruleError {
  static override readonly kind: string = "cross_origin_refused";
}
/** The server could not be reached or started, or answered outside the protocol. */
export class RemoteError extends FerruleError {
  static override readonly kind: string = "remote_error";
}
/** A request or a run was cancelled (an aborted signal, a consumer that stopped). */
export class RequestCancelledError extends FerruleError {
  static override readonly kind: string = "cancelled";
}
export class MissingAPIKeyError extends FerruleError {
  static override readonly kind: string = "missing_api_key";
}
export class InvalidToolCallError extends FerruleError {
  static override readonly kind: string = "invalid_tool_call";
}
export class ToolError extends FerruleError {
  static override readonly kind: string = "tool_error";
}
export class ModelError extends FerruleError {
  static override readonly kind: string = "model_error";
}
export class ModelNotFoundError extends ModelError {
  static override readonly kind: string = "model_not_found";
}
export class AuthenticationError extends ModelError {
  static override readonly kind: string = "authentication_error";
}
export class PermissionDeniedError extends ModelError {
  static override readonly kind: string = "permission_denied";
}
export class RateLimitError extends ModelError {
  static override readonly kind: string = "rate_limited";
}
export class QuotaExceededError extends RateLimitError {
  static override readonly kind: string = "quota_exceeded";
}
export class ProviderBadRequestError extends ModelError {
  static override readonly kind: string = "provider_bad_request";
}
export class ProviderConnectionError extends ModelError {
  static override readonly kind: string = "provider_connection_error";
}
export class ProviderProtocolError extends ModelError {
  static override readonly kind: string = "provider_protocol_error";
}
export class ProviderTimeoutError extends ModelError {
  static override readonly kind: string = "provider_timeout";
}
export class ProviderUnavailableError extends ModelError {
  static override readonly kind: string = "provider_unavailable";
}
export class StreamInterruptedError extends ModelError {
  static override readonly kind: string = "stream_interrupted";
}

type ErrorClass = new (message: string, details?: ErrorDetails, kind?: string) => FerruleError;

const KINDS = new Map<string, ErrorClass>();
for (const cls of [
  FerruleError,
  InvalidInputError,
  UnknownOperatorError,
  UnknownComponentTypeError,
  UnknownComponentError,
  UnknownMethodError,
  UnknownModelError,
  DuplicateComponentError,
  PluginError,
  PluginLoadError,
  InvalidOutputError,
  UnsupportedContentError,
  RequestTooLargeError,
  UnsupportedMediaTypeError,
  RequestTimeoutError,
  UnauthorizedError,
  MisdirectedRequestError,
  CrossOriginError,
  RemoteError,
  RequestCancelledError,
  MissingAPIKeyError,
  InvalidToolCallError,
  ToolError,
  ModelError,
  ModelNotFoundError,
  AuthenticationError,
  PermissionDeniedError,
  RateLimitError,
  QuotaExceededError,
  ProviderBadRequestError,
  ProviderConnectionError,
  ProviderProtocolError,
  ProviderTimeoutError,
  ProviderUnavailableError,
  StreamInterruptedError,
]) {
  KINDS.set(cls.kind, cls);
}

/** The error a server sent (`{kind, message, details}`), as its own class. */
export function errorFromDict(value: unknown): FerruleError {
  const error = (value ?? {}) as { kind?: unknown; message?: unknown; details?: unknown };
  const kind = typeof error.kind === "string" ? error.kind : "ferrule_error";
  const message = typeof error.message === "string" ? error.message : String(error.message);
  const details =
    error.details && typeof error.details === "object" ? (error.details as ErrorDetails) : {};
  const cls = KINDS.get(kind) ?? FerruleError;
  return new cls(message, details, kind);
}

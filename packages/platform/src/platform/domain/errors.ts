/**
 * Errors that carry their own status code and a one-line message for the platform's user.
 * The HTTP layer answers them as they are; anything else is the platform's own failure (500).
 */
export class PlatformError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "PlatformError";
  }
}

export const badRequest = (message: string) => new PlatformError(message, 400);
export const unauthorized = (message: string) => new PlatformError(message, 401);
export const forbidden = (message: string) => new PlatformError(message, 403);
export const notFound = (message: string) => new PlatformError(message, 404);
export const conflict = (message: string) => new PlatformError(message, 409);
export const preconditionFailed = (message: string) => new PlatformError(message, 412);
export const tooManyRequests = (message: string) => new PlatformError(message, 429);
/** The spec's 500s (invalid YAML, duplicate service) and provider failures passed on to the user. */
export const failed = (message: string) => new PlatformError(message, 500);

/**
 * Errors that carry their own status code. Handlers throw them; the framework turns them
 * into a short plain-text answer, which the platform shows verbatim to its user.
 * Anything else thrown by a handler answers 500 with a generic message (the details go to the log).
 */
export class ProviderError extends Error {
  readonly status: number;

  constructor(message: string, status = 500, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.status = status;
  }
}

/** 404: the instance (or the thing asked for) does not exist. */
export class NotFoundError extends ProviderError {
  constructor(message = "Instance not found.", options?: ErrorOptions) {
    super(message, 404, options);
  }
}

/** 412: the instance is still being provisioned and cannot be bound yet. */
export class NotReadyError extends ProviderError {
  constructor(message = "Instance is still being provisioned; try again in a moment.", options?: ErrorOptions) {
    super(message, 412, options);
  }
}

/** 409: an instance of that name already exists. */
export class AlreadyExistsError extends ProviderError {
  constructor(message = "An instance with this name already exists.", options?: ErrorOptions) {
    super(message, 409, options);
  }
}

/** 400: the request is malformed or a field is invalid. Say which field and what is expected. */
export class BadRequestError extends ProviderError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, 400, options);
  }
}

/**
 * 400 from a plans handler: this multi-cluster service's plans differ per pool, and the call
 * named none (`ctx.placement.poolName` is unset). On `GET /resources/plans` it is answered as the
 * platform understands it, JSON `{"msg": message, "missing_params": ["cluster"]}`, and the platform
 * asks its user for a pool. On any other call it is a plain 400 with the message.
 */
export class PoolRequiredError extends BadRequestError {
  constructor(message = "This service's plans differ per pool: ask for the plans of a pool.", options?: ErrorOptions) {
    super(message, options);
  }
}

/** Thrown by `createProvider` for a configuration it refuses to run with: a start-up error, never an answer. */
export class ConfigurationError extends Error {
  override name = "ConfigurationError";
}

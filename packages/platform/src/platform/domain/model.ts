/**
 * The records the platform keeps, and the name rules of the real platform (platform-notes.md).
 * Plain JSON: the same shapes live in memory and in Redis.
 */
import { SERVICE_NAME_PATTERN, type Encoding, type ParameterTree, type Variant } from "provider-kit/contract";

/**
 * No white space and no control characters: an address is printed on the operator's terminal.
 * One way to match each address (the domain up to its first dot past its first character holds
 * no dot), so a long address costs linear time, not quadratic backtracking.
 */
export const EMAIL = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}][^\s@\p{Cc}.]*\.[^\s@\p{Cc}]+$/u;
/** The longest address SMTP carries (RFC 5321's 256-octet path less its angle brackets). */
export const EMAIL_MAX_LENGTH = 254;
export const TEAM_NAME = /^[a-zA-Z][-@_.+\w]+$/;
export const SERVICE_NAME = SERVICE_NAME_PATTERN;
/** `<broker>::<service>`: a service of a registered broker, named as the platform names it (serviceNameBrokerSep). */
export const BROKER_SERVICE_NAME = /^([a-z][a-z0-9-]{0,39})::([A-Za-z0-9._-]{1,100})$/;
/** A native service's name, or a broker's service's. */
export const ANY_SERVICE_NAME = new RegExp(`${SERVICE_NAME_PATTERN.source}|${BROKER_SERVICE_NAME.source}`);
export const APP_NAME = /^[a-z][a-z0-9-]{0,62}$/;
export const ENV_NAME = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
export const PASSWORD_LENGTH = { min: 6, max: 50 };

export interface User {
  email: string;
  /** scrypt of the password with `salt`, hex. */
  passwordHash: string;
  salt: string;
  /** Most apps the user may own; absent: the platform's default quota. -1: unlimited. */
  quota?: number;
  /** Public keys (`POST /users/keys`). */
  keys?: PublicKey[];
  /** The SHA-256 of the API key (shown once, when made); `apiKeys` maps it back to the user. */
  apiKeyHash?: string;
}

interface PublicKey {
  name: string;
  content: string;
}

/** A single-use password reset token (`POST /users/<email>/password`), kept hashed. */
export interface ResetToken {
  hash: string;
  email: string;
  expiresAt: number;
}

/** Finds the user of an API key from its hash. */
export interface ApiKey {
  hash: string;
  email: string;
}

/** An app token (`POST /tokens`, variant 2): a credential for that app's routes only. */
export interface AppToken {
  hash: string;
  app: string;
  creation: string;
}

export interface Token {
  /** sha256 of the token: the store never holds a usable token. */
  hash: string;
  email: string;
  expiresAt: number;
}

export interface Team {
  name: string;
  users: string[];
}

export interface Service {
  name: string;
  /** Basic auth user name the provider expects (the manifest's `username`, else the id). */
  username: string;
  password: string;
  /** The provider's base URL (`endpoint.production`). */
  endpoint: string;
  /** Per cluster name, the provider's base URL for instances in that cluster's pools (`endpoint.<cluster>`). */
  clusterEndpoints?: Record<string, string>;
  /** Its instances live in a pool, and every call about one carries the pool's X-Tsuru-* headers. */
  multiCluster?: boolean;
  /**
   * An admin registered or last updated its manifest (its endpoints): only then do its calls carry
   * the kube config a cluster propagates, since any team may register a service of its own.
   */
  receivesKubeConfig?: true;
  variant: Variant;
  encoding: Encoding;
  /** Teams that may change or remove the service. */
  ownerTeams: string[];
  /** Teams whose users may create instances of it. */
  teams: string[];
  doc: string;
  /** Which proxied instance calls are which action (`PUT /1.31/services/<s>/manifest`); absent: none stored. */
  actionsManifest?: ServiceActionsManifest;
  /** Set on a broker's service (`<broker>::<service>`): every call goes to the broker over OSB. */
  broker?: BrokerService;
  /**
   * The action permissions granted, by the part below `service-action.<service>.` (an action, or
   * a leading part of one: `apps` covers `apps.rotate-password`), each with the teams holding it.
   */
  actionGrants?: Record<string, string[]>;
}

/** The platform's service manifest (1.31), as stored and shown. */
export interface ServiceActionsManifest {
  enabled: boolean;
  strict_actions: boolean;
  legacy_compat: boolean;
  /** Paths relative to the instance, Go ServeMux patterns: `/apps/{app}/rotate-password`. */
  operations: ActionOperation[];
}

export interface ActionOperation {
  method: string;
  path: string;
  action: string;
}

export interface Instance {
  name: string;
  service: string;
  plan?: string;
  /** Set by an update (`PUT /1.0/services/<s>/instances/<i>`), sent to the provider with it. */
  description?: string;
  tags?: string[];
  parameters?: ParameterTree;
  /** The pool it lives in: instances of multi-cluster services only. */
  pool?: string;
  ownerTeam: string;
  teams: string[];
  /** Apps bound to it, in bind order. */
  apps: string[];
  /** Per app, the unit addresses the provider was told about (Variant A unit binds). */
  boundUnits: Record<string, string[]>;
  /** Apps whose bind has begun and not finished: undone at start-up if the platform died meanwhile. */
  pendingBinds?: string[];
  /** The provider's last answer to a status call, as the status healer stored it. */
  status?: string;
}

export interface Unit {
  name: string;
  ip: string;
  state: "started";
}

export interface EnvVar {
  name: string;
  value: string;
  public: boolean;
}

/** The variables one bound instance exports to the app. */
interface ServiceEnv {
  service: string;
  instance: string;
  envs: Record<string, string>;
}

export interface App {
  name: string;
  platform: string;
  teamOwner: string;
  teams: string[];
  pool: string;
  /** The user who created it: app quotas count these. */
  owner?: string;
  /** Its address; absent: `<name>.localhost`. Swap exchanges the addresses of two apps. */
  address?: string;
  units: Unit[];
  /** Variables the users set. */
  env: EnvVar[];
  /** Variables from bindings, in bind order. */
  serviceEnvs: ServiceEnv[];
}

export interface LogEntry {
  Date: string;
  Message: string;
  Source: string;
  AppName: string;
  Unit: string;
}

/** One deploy of an app (`POST /apps/<a>/deploy`); the API shows it in the chosen variant's shape. */
export interface Deploy {
  id: string;
  app: string;
  /** ISO 8601 with offset. */
  timestamp: string;
  /** Nanoseconds, as a Go duration. */
  durationNs: number;
  commit: string;
  image: string;
  origin: string;
  log: string;
  error: string;
}

/** One call to a provider as the platform saw it; credentials and bind values masked. */
export interface ProviderCall {
  id: number;
  at: string;
  service: string;
  instance?: string;
  app?: string;
  method: string;
  path: string;
  url: string;
  requestHeaders: Record<string, string | string[]>;
  requestBody: string;
  status?: number;
  answer?: string;
  error?: string;
  durationMs: number;
  curl: string;
  /** The API request that sent it (absent for start-up work such as the seed). */
  operation?: { id: string; label: string };
  /** Sent to undo an earlier step of the same operation after a later one failed. */
  undo?: true;
  /** Sent by an operation the user forced (`?force=true`, `?ignoreerrors=true`, app removal): its failure did not stop it. */
  forced?: true;
}

/** A registered Open Service Broker, in the real platform's shape (types/service/broker.go's Broker). */
export interface Broker {
  name: string;
  url: string;
  config: BrokerConfig;
}

interface BrokerConfig {
  authConfig?: {
    basicAuthConfig?: { username: string; password: string };
    bearerConfig?: { token: string };
  };
  insecure?: boolean;
  /** Added to the `context` of every provision and bind. */
  context?: Record<string, unknown>;
  cacheExpirationSeconds?: number;
}

/** Which broker and catalog entry a `<broker>::<service>` service is. */
export interface BrokerService {
  broker: Broker;
  serviceId: string;
  /** The catalog's plans of the service. */
  plans: Array<{ id: string; name: string; description: string }>;
}

/** What an instance of a broker's service is at the broker (the real platform's BrokerInstanceData). */
export interface BrokerInstance {
  /** The platform's instance name: the record's key. */
  instance: string;
  uuid: string;
  serviceId: string;
  planId: string;
  /** The `operation` of the broker's last 202: sent back when polling last_operation. */
  lastOperation?: string;
  /** App name → binding id. */
  binds: Record<string, string>;
}

/**
 * The doc walks (test/docs/commands/walks.test.ts): which commands of which pages each one runs,
 * exactly as the pages show them. A command listed here counts as run for every page of its
 * walk that shows it (commands.test.ts); the walk fails if it did not run each one.
 */

export interface Walk {
  /** The pages it follows, relative to the repository's root. */
  docs: readonly string[];
  /** The commands it runs, by a name the walk uses, as the pages show them. */
  commands: Readonly<Record<string, string>>;
}

/** The README's quick start, then the Redis example's README: the whole flow with curl, its actions, the compiled provider. */
export const REDIS_EXAMPLE = {
  docs: ["README.md", "examples/redis/README.md"],
  commands: {
    start: "PROVIDER_PASSWORD=s3cret npm start",
    plans: "curl -u redis:s3cret localhost:8080/resources/plans",
    create: "curl -u redis:s3cret -d name=demo -d plan=shared -d team=web localhost:8080/resources",
    bind: "curl -u redis:s3cret -d app-name=myapp -d app-host=myapp.example.com localhost:8080/resources/demo/bind-app",
    check: "npm run provider-kit -- check --url localhost:8080 --username redis --password s3cret",
    setUp: 'P=http://localhost:8080 A="redis:s3cret"',
    flowPlans: "curl -u $A $P/resources/plans",
    flowCreate: "curl -u $A -d name=cache -d plan=shared -d team=myteam -d user=me@example.com -d eventid=1 $P/resources",
    flowStatus: "curl -u $A -w '%{http_code}\\n' $P/resources/cache/status",
    flowBind:
      "curl -u $A -d app-name=myapp -d app-host=myapp.example.com -d user=me@example.com -d eventid=2 $P/resources/cache/bind-app",
    flowInfo: "curl -u $A $P/resources/cache",
    rotate: "curl -u $A -d user=me@example.com -d eventid=5 $P/resources/cache/apps/myapp/rotate-password",
    rotateUnbound: "curl -u $A -d user=me@example.com -d eventid=6 $P/resources/cache/apps/other/rotate-password",
    retire: "curl -u $A -d user=me@example.com -d eventid=8 $P/resources/cache/apps/myapp/retire-old-passwords",
    memory: "curl -u $A $P/resources/cache/memory",
    flush: "curl -u $A -d user=me@example.com -d eventid=7 $P/resources/cache/flush",
    memoryWithoutAuth: "curl $P/resources/cache/memory",
    memoryOfUnknown: "curl -u $A $P/resources/nope/memory",
    flowUnbind:
      "curl -u $A -X DELETE -d app-name=myapp -d app-host=myapp.example.com -d user=me@example.com -d eventid=3 $P/resources/cache/bind-app",
    flowDestroy: "curl -u $A -X DELETE -d user=me@example.com -d eventid=4 $P/resources/cache",
    dedicatedCreate: "curl -u $A -d name=db -d plan=dedicated -d team=myteam $P/resources",
    dedicatedStatus: "curl -u $A -w '%{http_code}\\n' $P/resources/db/status",
    compiled: "PROVIDER_PASSWORD=s3cret REGISTRY_REDIS_URL=redis://:pw@registry:6379 node examples/redis/dist/main.js",
  },
} as const satisfies Walk;

/** The README's "Drive it as the platform does": the example in the background, the seeded platform. */
export const README_PLATFORM = {
  docs: ["README.md"],
  commands: {
    provider: "PROVIDER_PASSWORD=s3cret PORT=42080 npm start &",
    wait: "until curl -sf localhost:42080/healthcheck > /dev/null; do sleep 0.5; done",
    platform:
      "PLATFORM_ADMIN_EMAIL=me@example.com PLATFORM_ADMIN_PASSWORD=admin-s3cret npm run provider-kit -- platform --port 42000 --seed examples/redis/platform-seed.yaml",
  },
} as const satisfies Walk;

/** docs/tools/platform.md's "Try it end to end", with the example's manifest of actions registered on the way. */
export const PLATFORM_TOUR = {
  docs: ["docs/tools/platform.md", "examples/redis/README.md"],
  commands: {
    provider: "PROVIDER_PASSWORD=s3cret PORT=42080 npm start",
    platform:
      "PLATFORM_ADMIN_EMAIL=me@example.com PLATFORM_ADMIN_PASSWORD=admin-s3cret npm run provider-kit -- platform --port 42000 --seed examples/redis/platform-seed.yaml --allow-run",
    login:
      "TOKEN=$(curl -s -H 'Content-Type: application/json' -d '{\"password\":\"admin-s3cret\"}' localhost:42000/users/me@example.com/tokens | sed -E 's/.*\"token\":\"([^\"]+)\".*/\\1/')",
    env: 'curl -s -H "Authorization: bearer $TOKEN" localhost:42000/apps/myapp/env',
    run: 'curl -s -H "Authorization: bearer $TOKEN" localhost:42000/apps/myapp/run -d \'echo "$TSURU_UNIT: $(redis-cli --no-auth-warning -u "$REDIS_URL" ping)"\'',
    instance: 'curl -s -H "Authorization: bearer $TOKEN" localhost:42000/services/instances/cache',
    actionsManifest: "npm run -s provider-kit -- manifest --actions examples/redis/actions.ts > service-actions.json",
    putManifest:
      'curl -X PUT -H "Authorization: bearer $TSURU_TOKEN" -H "Content-Type: application/json" --data @service-actions.json "$TSURU_TARGET/1.31/services/redis/manifest"',
    unbind: 'curl -s -X DELETE -H "Authorization: bearer $TOKEN" localhost:42000/services/instances/cache/myapp',
    forcedUnbind:
      "curl -s -X DELETE -H \"Authorization: bearer $TOKEN\" 'localhost:42000/1.13/services/redis/instances/cache/apps/myapp?force=true'",
    remove: 'curl -s -X DELETE -H "Authorization: bearer $TOKEN" localhost:42000/services/instances/cache',
    removeIgnoringErrors:
      "curl -s -X DELETE -H \"Authorization: bearer $TOKEN\" 'localhost:42000/services/instances/cache?ignoreerrors=true'",
    instances: 'curl -s -H "Authorization: bearer $TOKEN" localhost:42000/services/instances',
  },
} as const satisfies Walk;

export const WALKS: Readonly<Record<string, Walk>> = { REDIS_EXAMPLE, README_PLATFORM, PLATFORM_TOUR };

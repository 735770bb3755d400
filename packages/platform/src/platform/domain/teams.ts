/** Teams and their members, with the real platform's rules (platform-notes.md, Users and teams). */
import { ADMIN_TEAM, sharesTeam, type Actor, type Context } from "./context.js";
import { badRequest, conflict, forbidden, notFound } from "./errors.js";
import { TEAM_NAME, type Service, type Team } from "./model.js";

export async function listTeams(context: Context, actor: Actor): Promise<Team[]> {
  const teams = await context.store.all("teams");
  return teams.filter((team) => sharesTeam(actor, [team.name])).sort((a, b) => a.name.localeCompare(b.name));
}

/** The team, when the actor is a member (or an admin). */
export async function getTeam(context: Context, actor: Actor, name: string): Promise<Team> {
  const team = await context.store.get("teams", name);
  if (!team) throw notFound(`Team "${name}" not found.`);
  if (!sharesTeam(actor, [name])) throw forbidden(`You are not a member of the team "${name}".`);
  return team;
}

export async function createTeam(context: Context, actor: Actor, name: string): Promise<void> {
  if (!TEAM_NAME.test(name)) {
    throw badRequest("Invalid team name: start with a letter, then at least one letter, digit or one of - @ _ . +");
  }
  if (await context.store.get("teams", name)) throw conflict(`Team "${name}" already exists.`);
  await context.store.put("teams", name, { name, users: [actor.email] });
}

export async function removeTeam(context: Context, actor: Actor, name: string): Promise<void> {
  // Whoever created "admin" again would act on everything.
  if (name === ADMIN_TEAM) throw forbidden(`The team "${ADMIN_TEAM}" cannot be removed: its members are the platform's admins.`);
  await getTeam(context, actor, name);
  const [apps, services, instances] = await Promise.all([
    context.store.all("apps"),
    context.store.all("services"),
    context.store.all("instances"),
  ]);
  const owned = [
    ...apps.filter((app) => app.teamOwner === name).map((app) => `app ${app.name}`),
    ...services.filter((service) => service.ownerTeams.includes(name)).map((service) => `service ${service.name}`),
    ...instances.filter((instance) => instance.ownerTeam === name).map((instance) => `service instance ${instance.name}`),
  ];
  if (owned.length > 0) {
    throw forbidden(`This team cannot be removed because it owns ${owned.join(", ")}: remove them or change their owner first.`);
  }
  // A team of the same name created later must not inherit this one's access.
  const withoutTeam = <T extends { teams: string[] }>(item: T): T => ({ ...item, teams: item.teams.filter((team) => team !== name) });
  await Promise.all([
    ...apps.filter((app) => app.teams.includes(name)).map((app) => context.store.put("apps", app.name, withoutTeam(app))),
    ...services
      .filter((service) => service.teams.includes(name) || Object.values(service.actionGrants ?? {}).some((teams) => teams.includes(name)))
      .map((service) => context.store.put("services", service.name, withoutGrants(withoutTeam(service), name))),
    ...instances.filter((instance) => instance.teams.includes(name)).map((instance) => context.store.put("instances", instance.name, withoutTeam(instance))),
  ]);
  await context.store.delete("teams", name);
}

/** The service without the team's action grants (an action no team holds any more goes). */
function withoutGrants(service: Service, team: string): Service {
  if (!service.actionGrants) return service;
  const grants = Object.entries(service.actionGrants)
    .map(([action, teams]) => [action, teams.filter((holder) => holder !== team)] as const)
    .filter(([, teams]) => teams.length > 0);
  return { ...service, actionGrants: Object.fromEntries(grants) };
}

export async function addMember(context: Context, actor: Actor, teamName: string, email: string): Promise<void> {
  const team = await context.store.get("teams", teamName);
  if (!team) throw notFound(`Team "${teamName}" not found.`);
  if (!(await context.store.get("users", email))) throw notFound(`User "${email}" not found.`);
  if (!sharesTeam(actor, [teamName])) throw forbidden(`You are not a member of the team "${teamName}".`);
  if (team.users.includes(email)) throw conflict(`User "${email}" is already a member of the team "${teamName}".`);
  await context.store.put("teams", teamName, { ...team, users: [...team.users, email] });
}

export async function removeMember(context: Context, actor: Actor, teamName: string, email: string): Promise<void> {
  const team = await getTeam(context, actor, teamName);
  if (!team.users.includes(email)) throw notFound(`User "${email}" is not a member of the team "${teamName}".`);
  if (team.users.length === 1) throw forbidden("You can not remove this user from this team, because it is the last user within the team, and a team can not be orphaned.");
  await context.store.put("teams", teamName, { ...team, users: team.users.filter((user) => user !== email) });
}

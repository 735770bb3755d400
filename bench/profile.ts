/**
 * Summarize the CPU profile of one benchmark server (`npm run bench -- --profile <dir>`).
 * Usage: npx tsx bench/profile.ts <dir>/<server id> | <file.cpuprofile> [top=25]
 */
import { summarizeProfile } from "./profiles.js";

const [target, topArg] = process.argv.slice(2);
if (!target) {
  console.error("Usage: npx tsx bench/profile.ts <dir>/<server id> | <file.cpuprofile> [top=25]");
  process.exit(2);
}
console.log(summarizeProfile(target, Number(topArg ?? 25)).join("\n"));

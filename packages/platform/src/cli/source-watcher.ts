/**
 * Watches a project's folder tree for `provider-kit dev` and says which files changed, however
 * they were saved: written in place, renamed over (sed -i, an editor's safe write, a formatter),
 * deleted and made again, added or removed.
 *
 * Directories are watched, one watch each (fs.watch without `recursive`), never files: a save by
 * rename gives the file a new inode, and a watch held on the old one (what Node's recursive watch
 * holds on Linux) sees no later change. A directory's watch reports every entry written, created,
 * renamed or removed in it, whatever the entry's inode. Symbolic links are not followed: a link
 * counts as an entry of its own, and nothing outside the tree is watched.
 */
import { watch, type FSWatcher } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";

export interface Change {
  /** The path relative to the watched folder. */
  file: string;
  kind: "changed" | "added" | "removed";
}

export interface SourceWatcherOptions {
  /** Whether a path relative to the folder is watched (a folder left out is not entered). */
  include: (relative: string) => boolean;
  /** Called when no event came for `quietMs`, with what changed since the last call (never empty), sorted by path. */
  onChange: (changes: Change[]) => void;
  /** A folder that could not be watched (e.g. the system's limit on watches): the rest stays watched. */
  onError: (error: Error) => void;
  /** Events closer together than this are one change: a save is several events. */
  quietMs: number;
}

export interface SourceWatcher {
  close(): void;
}

type Kind = "file" | "dir";

/** What `entry` is now, without following a link (a link is a file here); undefined when it is gone. */
async function kindOf(entry: string): Promise<Kind | undefined> {
  const stats = await lstat(entry).catch(() => undefined);
  if (stats === undefined) return undefined;
  return stats.isDirectory() ? "dir" : "file";
}

/** Starts watching `root`; resolves once every folder under it is watched. */
export async function watchSources(root: string, options: SourceWatcherOptions): Promise<SourceWatcher> {
  /** Every entry seen, by relative path: what a later event is compared with. */
  const known = new Map<string, Kind>();
  const watchers = new Map<string, FSWatcher>();
  /** Paths with events since the last report; looked at once events stop, when a save has settled. */
  const touched = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const touch = (relative: string) => {
    touched.add(relative);
    clearTimeout(timer);
    timer = setTimeout(() => void report(), options.quietMs);
  };

  const unwatch = (dir: string) => {
    for (const [watched, watcher] of watchers) {
      if (watched === dir || watched.startsWith(`${dir}${path.sep}`)) {
        watcher.close();
        watchers.delete(watched);
      }
    }
  };

  /** Watches `dir` and the folders under it; their entries become known, or, in a `fresh` (new) folder, are reported as added. */
  const watchDir = async (dir: string, fresh: boolean): Promise<void> => {
    if (closed || watchers.has(dir)) return;
    const absolute = path.join(root, dir);
    let watcher: FSWatcher;
    try {
      watcher = watch(absolute, (_event, name) => {
        if (name === null) return;
        const relative = path.join(dir, name);
        if (options.include(relative)) {
          touch(relative);
          // A new folder is watched at once: files saved into it right away are not missed.
          void kindOf(path.join(root, relative)).then(async (kind) => {
            if (kind === "dir" && !known.has(relative)) await watchDir(relative, true);
          });
        }
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") options.onError(new Error(`${absolute} cannot be watched: ${(error as Error).message}`));
      return;
    }
    // A folder removed under its watch: it ends, and the removal is reported by the parent's watch.
    watcher.on("error", () => unwatch(dir));
    watchers.set(dir, watcher);
    const entries = await readdir(absolute, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const relative = path.join(dir, entry.name);
      if (!options.include(relative)) continue;
      if (entry.isDirectory()) {
        known.set(relative, "dir");
        await watchDir(relative, fresh);
      } else if (fresh) {
        touch(relative); // not known yet: reported as added
      } else {
        known.set(relative, "file");
      }
    }
  };

  const report = async () => {
    const paths = [...touched];
    touched.clear();
    const changes: Change[] = [];
    for (const relative of paths) {
      const before = known.get(relative);
      const now = await kindOf(path.join(root, relative));
      if (now === undefined) {
        // Gone: a file or folder that was there is removed; one never seen was a save's temporary file.
        if (before === undefined) continue;
        for (const entry of [...known.keys()]) if (entry.startsWith(`${relative}${path.sep}`)) known.delete(entry);
        known.delete(relative);
        unwatch(relative);
        changes.push({ file: relative, kind: "removed" });
      } else if (now === "dir") {
        // A new folder is no change by itself: the files in it are reported.
        known.set(relative, "dir");
        await watchDir(relative, true);
      } else {
        changes.push({ file: relative, kind: before === undefined ? "added" : "changed" });
        known.set(relative, "file");
      }
    }
    if (!closed && changes.length > 0) options.onChange(changes.sort((a, b) => a.file.localeCompare(b.file)));
  };

  await watchDir("", false);
  if (!watchers.has("")) throw new Error(`${root} cannot be watched: it does not exist or is not a folder.`);
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}

/** One line for the terminal: "src/a.ts changed", "src/a.ts changed, src/b.ts added and 2 more". */
export function describeChanges(changes: Change[], shown: (file: string) => string, most = 3): string {
  const listed = changes.slice(0, most).map((change) => `${shown(change.file)} ${change.kind}`);
  const more = changes.length - listed.length;
  return more > 0 ? `${listed.join(", ")} and ${more} more` : listed.join(", ");
}

// Retention checks a plugin marks as running (PluginHost.retention; core's event-manager/retention-checks.ts).

/** FolderRetention of the REST API: retention in hours (0 keeps everything). */
export interface FolderRetention {
  path: string;
  retention: number;
  delete_empty_dirs: boolean;
}

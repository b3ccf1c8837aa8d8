import type { Connection } from '../vfs/connection-manager.js';

/** ConnectionStatus as the REST API renders it (GET /api/v2/connections). */
export interface ConnectionStatus {
  username: string;
  connection_id: string;
  client_version: string;
  remote_address: string;
  connection_time: number;
  command: string;
  last_activity: number;
  protocol: string;
  active_transfers: { operation_type: 'upload' | 'download'; path: string; start_time: number; size: number }[];
  node: string;
}

/** A connection of node `node` as the REST API renders it. */
export function renderConnection(c: Connection, node: string): ConnectionStatus {
  return {
    username: c.username,
    connection_id: c.connection_id,
    client_version: c.client_version,
    remote_address: c.remote_address,
    connection_time: c.connection_time,
    command: c.command,
    last_activity: c.last_activity,
    protocol: c.protocol,
    active_transfers: [...c.transfers.values()].map((t) => ({
      operation_type: t.operation_type,
      path: t.path,
      start_time: t.start_time,
      size: t.size,
    })),
    node,
  };
}

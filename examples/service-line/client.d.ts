import type net from 'node:net';
export interface LineClient {
  socket: net.Socket;
  closed: Promise<unknown>;
  nextLine(): Promise<string | null>;
  send(command: string): Promise<string[]>;
  close(): Promise<unknown>;
}
export function connectLine(port: number, host?: string): Promise<LineClient>;

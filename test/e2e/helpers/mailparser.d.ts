// The few mailparser 3.9 APIs the tests use (the package ships no types).
declare module 'mailparser' {
  export interface ParsedAttachment {
    filename?: string;
    contentType: string;
    content: Buffer;
    size: number;
  }
  export interface ParsedAddress {
    value: { address?: string; name: string }[];
    text: string;
  }
  export interface ParsedMail {
    subject?: string;
    text?: string;
    html?: string | false;
    to?: ParsedAddress | ParsedAddress[];
    bcc?: ParsedAddress | ParsedAddress[];
    from?: ParsedAddress;
    headers: Map<string, unknown>;
    attachments: ParsedAttachment[];
  }
  export function simpleParser(source: Buffer | string | NodeJS.ReadableStream): Promise<ParsedMail>;
}

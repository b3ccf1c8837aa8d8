// The few mailparser 3.9 APIs the core tests use (the package ships no types).
declare module 'mailparser' {
  export interface ParsedAddress {
    value: { address?: string; name: string }[];
    text: string;
  }
  export interface ParsedMail {
    subject?: string;
    text?: string;
    to?: ParsedAddress | ParsedAddress[];
    from?: ParsedAddress;
  }
  export function simpleParser(source: Buffer | string | NodeJS.ReadableStream): Promise<ParsedMail>;
}

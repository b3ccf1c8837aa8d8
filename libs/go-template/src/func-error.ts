/** A Go error returned by a function; execution reports it as "error calling NAME: ...". */
export class FuncError extends Error {}

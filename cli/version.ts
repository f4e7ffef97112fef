/** The CLI's version: a constant, so `svc --version` reads no file (a unit test keeps it equal to package.json). */
export const VERSION = '0.2.0';

/**
 * Every string the web client shows, in one catalogue (ready for translation:
 * a second language is a second object of the same type). Functions take
 * the values they put in a sentence.
 */
export const en = {
  appName: 'Ferry',
  loading: 'Loading…',
  // login
  loginTitle: 'Sign in to Ferry',
  username: 'Username',
  password: 'Password',
  signIn: 'Sign in',
  signingIn: 'Signing in…',
  passcodeTitle: 'Two-factor authentication',
  passcodeHelp: 'Enter the code from your authenticator app, or one of your recovery codes.',
  passcode: 'Authentication code',
  verify: 'Verify',
  back: 'Back',
  wrongCredentials: 'Wrong username or password, or the account is disabled or expired.',
  wrongPasscode: 'The authentication code is not valid. Try again.',
  tooManyAttempts: 'Too many attempts. Wait a moment and try again.',
  refused: (why: string) => `Sign-in refused: ${why}`,
  networkError: 'The server cannot be reached. Check your connection and try again.',
  unexpected: (status: number) => `Unexpected answer from the server (${status}).`,
  // layout
  signedInAs: (user: string) => `Signed in as ${user}`,
  logout: 'Sign out',
  skipToContent: 'Skip to content',
  // files
  filesTitle: 'Files',
  breadcrumbs: 'Location',
  home: 'Home',
  filter: 'Filter by name',
  filterPlaceholder: 'Filter…',
  name: 'Name',
  size: 'Size',
  modified: 'Modified',
  actions: 'Actions',
  sortBy: (column: string, dir: 'ascending' | 'descending') => `Sort by ${column}, ${dir}`,
  folder: 'Folder',
  emptyFolder: 'This folder is empty.',
  noMatch: 'No entry matches the filter.',
  entries: (shown: number, total: number) => (shown === total ? `${total} entries` : `${shown} of ${total} entries`),
  newFolder: 'New folder',
  newFolderName: 'Name of the new folder',
  create: 'Create',
  cancel: 'Cancel',
  rename: 'Rename',
  renameTo: (name: string) => `New name for ${name}`,
  save: 'Save',
  delete: 'Delete',
  confirmDelete: (name: string) => `Delete ${name}? This cannot be undone.`,
  download: 'Download',
  upload: 'Upload files',
  uploads: 'Uploads',
  uploadDone: 'Done',
  uploadFailed: (why: string) => `Failed: ${why}`,
  uploadProgress: (name: string) => `Upload of ${name}`,
  clearUploads: 'Clear finished',
  actionFailed: (why: string) => `The action failed: ${why}`,
  dismiss: 'Dismiss',
  invalidName: 'A name may not be empty, "." or "..", nor contain "/".',
  sessionExpired: 'Your session has ended. Sign in again.',
};

export type Strings = typeof en;
export const t: Strings = en;

/** What the console's API calls answer on failure: the API's message (a joi validation message names its field). */
import { errorMessage } from '../api';
import { t } from './strings';

/** A failed request's message: the API's, else its status. */
export const failure = (status: number, body: unknown): string => errorMessage(body, t.actionFailed(String(status)));

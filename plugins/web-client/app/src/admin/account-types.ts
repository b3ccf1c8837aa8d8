/** The types of users and groups as the admin API reads and takes them (its OpenAPI document's; no code here: the unit tests read it). */
import type { operations } from '../../generated/api.js';

export type UserRow = operations['get_api_v2_users_username']['responses'][200]['content']['application/json'];
export type UserInput = NonNullable<operations['post_api_v2_users']['requestBody']>['content']['application/json'];
export type GroupRow = operations['get_api_v2_groups_name']['responses'][200]['content']['application/json'];
export type GroupInput = NonNullable<operations['post_api_v2_groups']['requestBody']>['content']['application/json'];
/** What a group gives its users (its object's `user_settings`, as the API takes it). */
export type GroupSettings = NonNullable<GroupInput['user_settings']>;

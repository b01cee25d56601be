/** The operator console's public face: the router the API process mounts, and what it is built from. */
export { consoleRouter } from './router';
export { consoleCookies } from './session-cookies';
